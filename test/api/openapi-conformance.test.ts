/**
 * /openapi.json cannot drift from the answers: every route described with a response schema is called live (over
 * a small registry + FMCSA sample) and its answer checked against that schema, the one the document's named
 * component is generated from; every JSON route's 200 body is a named component; and the document passes
 * `redocly lint` with the recommended rules (@redocly/cli, a dev dependency).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { generateFmcsaSample } from '../../ingest/fmcsa/fmcsa.sample.ts';
import { listRoutes } from '../../service/platform/route-registry.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { REPO_ROOT } from '../helpers/shared.ts';

/** A live request per described route (`{leaf_hash}` is filled from the identity card). */
const SAMPLES: Record<string, string> = {
  'GET /api/company/{ticker}': '/api/company/AAPL',
  'GET /api/carrier/{dot}/snapshot': '/api/carrier/{dot}/snapshot',
  'GET /api/carriers': '/api/carriers?state=TX&limit=50',
  'GET /api/red-flags': '/api/red-flags?limit=200',
  'GET /api/stats': '/api/stats',
  'GET /api/ir/rankings': '/api/ir/rankings',
  'GET /api/export': '/api/export',
  'GET /api/search': '/api/search?q=micro',
  'GET /api/verify/{leaf_hash}': '/api/verify/{leaf_hash}',
  'GET /.well-known/proofline-keys.json': '/.well-known/proofline-keys.json',
};
/** Described routes not called here, and why. */
const NOT_CALLED: Record<string, string> = {
  'POST /api/vet': 'spends credits of a state-store account (test/vetting covers its answers)',
};

let root: string;
let svc: TestService;
beforeAll(async () => {
  root = await tempDir('proofline-conformance-');
  const inputDir = path.join(root, 'in');
  await ensureSample(inputDir, {
    scale: 'small',
    seed: 42,
    generators: [edgarSampleGenerator, { name: 'fmcsa', generate: (o) => generateFmcsaSample({ ...o, carriers: 3000 }) }],
  });
  const config = testConfig(path.join(root, 'data'));
  await ingestAll(config, [registryPipeline, fmcsaPipeline], inputDir);
  svc = await buildTestService(config, ['registry', 'fmcsa']);
}, 600_000);
afterAll(async () => {
  await svc?.close();
  await removeDir(root);
});

describe('OpenAPI conformance', { timeout: 300_000 }, () => {
  it('answers every route with a response schema the way the schema says', async () => {
    const leaf = (await getJson(svc.app, '/api/company/AAPL')).body.origin.leaf_hash as string;
    const dot = String((await getJson(svc.app, '/api/red-flags?limit=1')).body.results[0].dot_number);
    await getJson(svc.app, '/openapi.json'); // every family has registered and described its routes
    const described = listRoutes().filter((r) => r.response);
    expect(described.length).toBeGreaterThanOrEqual(Object.keys(SAMPLES).length);
    for (const r of described) {
      const key = `${r.method} ${r.path}`;
      if (NOT_CALLED[key]) continue;
      expect(SAMPLES[key], `${key} has a response schema: add a live request to SAMPLES`).toBeDefined();
      const res = await getJson(svc.app, SAMPLES[key]!.replace('{leaf_hash}', leaf).replace('{dot}', dot));
      expect(res.status, `${key}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
      const { usage_meta: _u, ...body } = res.body as Record<string, unknown>;
      const parsed = (r.response as z.ZodType).safeParse(body);
      expect(parsed.success, `${key}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues.slice(0, 5))}`).toBe(true);
    }
  });

  it('names the 200 body of every JSON route as a component, and the error body as one shared component', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body;
    for (const [p, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(ops)) {
        const json = op.responses['200'].content?.['application/json'];
        if (!json) continue;
        const ref = json.schema.$ref as string;
        expect(ref, `${method} ${p}`).toMatch(/^#\/components\/schemas\/\w+Response$/);
        expect(doc.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
        for (const [status, r] of Object.entries(op.responses as Record<string, any>))
          if (status !== '200' && r.content) expect(r.content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
      }
    const redFlags = doc.components.schemas.GetApiRedFlagsResponse;
    expect(JSON.stringify(redFlags)).toContain('"CRITICAL"');
  });

  it('passes redocly lint with the recommended rules', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body;
    const file = path.join(root, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--extends', 'recommended', '--format', 'stylish'],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`.slice(-3000)).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/\bwarning\b.*\b(operation|tag|security|info)-/);
  });
});
