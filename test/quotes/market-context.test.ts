import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { ingestQuotes, linkQuoteFixtures } from './quotes-fixture.ts';

describe.skipIf(!HAS_SHARED)('quote market context from the registry (real NVDA submissions and companyfacts)', () => {
  let dir: string;
  let svc: TestService;
  beforeAll(async () => {
    dir = await tempDir();
    const input = path.join(dir, 'input');
    for (const f of ['tickers/company_tickers_exchange.json', 'submissions/CIK0001045810.json', 'companyfacts/CIK0001045810.json']) {
      await mkdir(path.dirname(path.join(input, 'sec', f)), { recursive: true });
      await copyFile(fixture(`sec/${f}`), path.join(input, 'sec', f));
    }
    await linkQuoteFixtures(input, ['alpaca-daily/NVDA_1Day.csv']);
    const config = testConfig(path.join(dir, 'data'));
    await ingestAll(config, [registryPipeline], input);
    await ingestQuotes(config, input);
    svc = await buildTestService(config, ['registry', 'quotes']);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(dir);
  });

  it('computes market cap = close × EDGAR shares outstanding, resolves the name, and accepts a CIK', async () => {
    const facts = await svc.deps.readers.registry.query(`SELECT value FROM company_facts WHERE cik = 1045810 AND metric = 'shares_outstanding'`);
    const { status, body } = await getJson(svc.app, '/api/company/NVDA/quote');
    expect(status).toBe(200);
    expect(body.name).toMatch(/NVIDIA/i);
    const shares = Number(facts[0].value);
    expect(body.market_context).toMatchObject({ shares_outstanding: shares, market_cap: Math.round(shares * body.quote.close) });
    expect(body.market_context.note).toMatch(/shares outstanding as of \d{4}-\d{2}-\d{2}/);
    const byCik = await getJson(svc.app, '/api/company/1045810/quote');
    expect(byCik.body.ticker).toBe('NVDA');
  });
});
