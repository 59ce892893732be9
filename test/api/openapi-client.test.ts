/**
 * Acceptance of issue 21: a TypeScript client generated from the live /openapi.json with openapi-typescript types the
 * identity card, the vetting record and the carrier snapshot with their real fields. The generated types and a small
 * client reading those fields are type-checked with the repository's own `tsc --noEmit`; a client reading a field
 * that does not exist, or reading one with the wrong type, must fail to type-check (so this test can fail).
 *
 * openapi-typescript 6 (a dev dependency): version 7 generates through the TypeScript 5 compiler API, which the
 * repository's TypeScript 7 (Go-native) does not have; version 6 writes the types as text and reads OpenAPI 3.1.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { createApp } from '../../service/app.ts';
import { getJson } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { REPO_ROOT } from '../helpers/shared.ts';

let root: string;
beforeAll(async () => {
  root = await tempDir('proofline-oa-client-');
  const app = createApp({
    readers: {},
    log: silentLogger,
    now: () => new Date(),
    startedAt: new Date(),
    options: { publicBaseUrl: 'http://proofline.test', snapshotStaleHours: 48, version: '0.0.0-test', dataDir: path.join(root, 'data') },
  });
  const doc = await getJson(app, '/openapi.json');
  expect(doc.status).toBe(200);
  writeFileSync(path.join(root, 'openapi.json'), JSON.stringify(doc.body));
  const gen = spawnSync(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/openapi-typescript/bin/cli.js'), 'openapi.json', '--output', 'api.ts'],
    { cwd: root, encoding: 'utf8' },
  );
  expect(gen.status, `${gen.stdout}\n${gen.stderr}`).toBe(0);
  writeFileSync(
    path.join(root, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2023',
        lib: ['es2023'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        types: [],
      },
      include: ['*.ts'],
    }),
  );
}, 120_000);
afterAll(async () => {
  if (root) await removeDir(root);
});

/** Type-checks `client.ts` (beside the generated `api.ts`) with the repository's tsc; the compiler's output on failure. */
function typeCheck(client: string): { ok: boolean; output: string } {
  writeFileSync(path.join(root, 'client.ts'), client);
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', root], {
    cwd: root,
    encoding: 'utf8',
  });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

const HEAD = `import type { paths } from './api.ts';
type Json<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
declare const card: Json<'/api/company/{ticker}', 'get'>;
declare const vetting: Json<'/api/vet', 'post'>;
declare const snapshot: Json<'/api/carrier/{dot}/snapshot', 'get'>;
`;

describe('a client generated with openapi-typescript from /openapi.json', { timeout: 120_000 }, () => {
  it('types the identity card, the vetting record and the carrier snapshot with their real fields', () => {
    const r = typeCheck(`${HEAD}
const cik: string = card.identity.cik;
const name: string = card.identity.name;
const status: 'active' | 'acquired' | 'delisted' | 'inactive' = card.identity.status;
const marketCap: number | null = card.peak_metrics.market_cap_usd;
const remaining: number = card.usage_meta.remaining;
const dot: number = vetting.dot_number;
const carrier: string = vetting.carrier;
const level: 'LOW' | 'MODERATE' | 'HIGH' | 'CRITICAL' = vetting.risk_level;
const flags: string[] = vetting.red_flags;
const basics: Record<string, number> = vetting.basics;
const signature: string = vetting.signature.value;
const score: number = snapshot.assessment.risk_score;
const recommendation: 'APPROVE' | 'CAUTION' | 'REJECT' = snapshot.assessment.recommendation;
const codes: string[] = snapshot.assessment.red_flags.map((f) => f.code);
const asOf: string | null = snapshot.inputs[0].as_of;
const oos: number | null = snapshot.features.driver_oos_rate;
export const read = [cik, name, status, marketCap, remaining, dot, carrier, level, flags, basics, signature, score, recommendation, codes, asOf, oos];
`);
    expect(r.output).toBe('');
    expect(r.ok).toBe(true);
  });

  it('rejects a field the answers do not have, and a field read with the wrong type', () => {
    const missing = typeCheck(`${HEAD}export const x: string = card.identity.central_index_key;\n`);
    expect(missing.ok).toBe(false);
    expect(missing.output).toMatch(/central_index_key/);
    const retyped = typeCheck(`${HEAD}export const x: number = card.identity.cik;\n`);
    expect(retyped.ok).toBe(false);
    expect(retyped.output).toMatch(/TS2322/);
    const snapshotField = typeCheck(`${HEAD}export const x: string = snapshot.assessment.risk_score;\n`);
    expect(snapshotField.ok).toBe(false);
    const vettingField = typeCheck(`${HEAD}export const x: string = vetting.no_such_field;\n`);
    expect(vettingField.ok).toBe(false);
  });
});
