/**
 * Spot checks of the read API on the real SEC fixtures (../shared/fixtures/sec:
 * current and 2023-05 ticker files, submissions of AAPL, NVDA, Fannie Mae, ...).
 * The input folder holds symlinks to the fixture folders (nothing is copied).
 */
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { verifyReceiptChain } from '../../service/receipts/receipt-chain.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

describe.skipIf(!HAS_SHARED)('read API on real SEC fixtures', () => {
  let root: string;
  let svc: TestService;
  beforeAll(async () => {
    root = await tempDir();
    const sec = path.join(root, 'input', 'sec');
    await mkdir(sec, { recursive: true });
    await symlink(fixture('sec/tickers'), path.join(sec, 'tickers'));
    await symlink(fixture('sec/submissions'), path.join(sec, 'submissions'));
    const config = testConfig(path.join(root, 'data'));
    await ingestAll(config, [registryPipeline], path.join(root, 'input'));
    svc = await buildTestService(config, ['registry']);
  }, 300_000);
  afterAll(async () => {
    await svc?.deps.usage?.close();
    await svc?.close();
    await removeDir(root);
  });

  it('AAPL: identity card, found by search, its origin leaf verifies with a signed receipt', async () => {
    const card = await getJson(svc.app, '/api/company/AAPL');
    expect(card.status).toBe(200);
    expect(card.body.identity).toMatchObject({ name: 'Apple Inc.', cik: '320193', status: 'active' });
    expect((await getJson(svc.app, '/api/search?q=apple')).body.results.companies[0].ticker).toBe('AAPL');
    const v = await getJson(svc.app, `/api/verify/${card.body.origin.leaf_hash}`);
    expect(v.status).toBe(200);
    expect(v.body.chain).toMatchObject({ valid: true, length: 2 });
    expect(v.body.chain.leaves[1]).toMatchObject({ kind: 'source', source_url: 'https://data.sec.gov/submissions/CIK0000320193.json' });
    const keys = (await getJson(svc.app, '/.well-known/proofline-keys.json')).body.keys;
    expect(verifyReceiptChain([v.body.receipt], keys).valid).toBe(true);
  });

  it('NVDA: identity card with semiconductor tags, searchable by them', async () => {
    const card = await getJson(svc.app, '/api/company/NVDA');
    expect(card.body.identity).toMatchObject({ name: 'NVIDIA CORP', cik: '1045810' });
    const r = await getJson(svc.app, '/api/search?q=nvidia');
    expect(r.body.results.companies[0]).toMatchObject({ ticker: 'NVDA', cik: 1045810 });
  });

  it('Fannie Mae: every one of its tickers resolves to CIK 310522; search lists the company once', async () => {
    for (const t of ['FNMA', 'FNMAS', 'FNMAP', 'FNMFN', 'FNMAT']) {
      const r = await getJson(svc.app, `/api/company/${t}`);
      expect(r.status, t).toBe(200);
      expect(r.body.identity.cik, t).toBe('310522');
    }
    expect((await getJson(svc.app, '/api/company/310522')).body.identity.ticker).toBe('FNMA');
    const s = await getJson(svc.app, '/api/search?q=federal%20national%20mortgage');
    expect(s.body.results.companies.filter((c: { cik: number }) => c.cik === 310522)).toHaveLength(1);
  });

  it('a delisted company (Activision Blizzard) answers 200 with status delisted and is still searchable', async () => {
    const r = await getJson(svc.app, '/api/company/ATVI');
    expect(r.status).toBe(200);
    expect(r.body.identity).toMatchObject({ cik: '718877', status: 'delisted' });
    const s = await getJson(svc.app, '/api/search?q=activision');
    expect(s.body.results.companies[0]).toMatchObject({ ticker: 'ATVI', status: 'delisted' });
  });

  it('stats count the fixture registry', async () => {
    const r = await getJson(svc.app, '/api/stats');
    expect(r.body.totals.companies).toBeGreaterThan(10_000);
    expect(r.body.totals.filings).toBeGreaterThan(1000);
  });
});
