import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';

let root: string;
let svc: TestService;
beforeAll(async () => {
  root = await tempDir();
  const inputDir = path.join(root, 'input');
  await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
  const config = testConfig(path.join(root, 'data'));
  await ingestAll(config, [registryPipeline], inputDir);
  svc = await buildTestService(config, ['registry']);
});
afterAll(async () => {
  await svc.close();
  await removeDir(root);
});

describe('GET /api/company/{ticker}', () => {
  it('serves the layer-0 identity card with a verifiable origin leaf', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/AAPL');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      schema: 'proofline/sec-company/v1',
      layer: 0,
      identity: { name: 'Apple Inc.', cik: '320193', ticker: 'AAPL', exchange: 'Nasdaq', status: 'active', headquarters: 'Cupertino, CA' },
    });
    const full = (await getJson(svc.app, '/api/company/AAPL?detail=full')).body;
    expect(full.origin.leaf_hash).toBe(body.origin.leaf_hash);
    expect(verifyLeaf(full.origin)).toBe(true);
    expect(full.origin.source_url).toBe('https://data.sec.gov/submissions/CIK0000320193.json');
  });
  it('accepts a CIK, padded or not', async () => {
    for (const ref of ['320193', '0000320193', 'CIK0000320193']) {
      const { status, body } = await getJson(svc.app, `/api/company/${ref}`);
      expect(status).toBe(200);
      expect(body.identity.ticker).toBe('AAPL');
    }
  });
  it('is case-insensitive on tickers', async () => {
    expect((await getJson(svc.app, '/api/company/aapl')).body.identity.cik).toBe('320193');
  });
  it('answers 404 {error, ticker, hint} for an unknown ticker, with close matches', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/AAPLX');
    expect(status).toBe(404);
    expect(body).toMatchObject({ status: 404, ticker: 'AAPLX' });
    expect(body.error).toMatch(/no company/);
    expect(body.hint).toMatch(/AAPL/);
  });
  it('answers 400 naming the parameter for a malformed ticker', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/%3Cscript%3E');
    expect(status).toBe(400);
    expect(body).toMatchObject({ status: 400, parameter: 'ticker' });
  });
});

describe('GET /api/health', () => {
  it('is healthy with a fresh snapshot', async () => {
    const { status, body } = await getJson(svc.app, '/api/health');
    expect(status).toBe(200);
    expect(body.status).toBe('healthy');
    expect(body.db).toBe('ok');
    expect(body.db_detail.registry.snapshot_id).toBeTruthy();
    expect(typeof body.uptime_seconds).toBe('number');
  });
  it('is degraded with reasons when a snapshot is stale or a dependency is down', async () => {
    const stale = await buildTestService(svc.config, ['registry'], {
      now: () => new Date(Date.now() + 72 * 3600_000),
      probes: { redis: async () => false },
    });
    const { body } = await getJson(stale.app, '/api/health');
    expect(body.status).toBe('degraded');
    expect(body.reasons.join(' ')).toMatch(/registry: snapshot is .* hours old/);
    expect(body.reasons).toContain('redis is down');
    await stale.close();
  });
});

describe('GET /api/ready', () => {
  it('is 503 until the snapshots are open and the state store answers, then 200; never metered', async () => {
    const before = await getJson(svc.app, '/api/ready');
    expect(before.status).toBe(503);
    expect(before.body).toMatchObject({ ready: false, snapshots: { registry: true }, state_store: 'not_configured' });
    expect(before.body.usage_meta).toBeUndefined();
    const dir = await tempDir();
    const state = await StateStore.open(stateDbPath(dir));
    const withState = await buildTestService(svc.config, ['registry'], { state });
    const after = await getJson(withState.app, '/api/ready');
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ ready: true, state_store: 'up', reasons: [] });
    expect((await getJson(withState.app, '/api/health')).body.dependencies.state).toBe('up');
    await withState.close();
    await state.close();
    await removeDir(dir);
  });
});

describe('unknown routes', () => {
  it('answer 404 JSON', async () => {
    const { status, body } = await getJson(svc.app, '/api/nope');
    expect(status).toBe(404);
    expect(body.status).toBe(404);
  });
});
