import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { ingestQuotes, linkQuoteFixtures } from './quotes-fixture.ts';
import { marketContext } from '../../service/quotes/quotes.queries.ts';

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

  it('computes market cap = close × EDGAR shares outstanding as of the quote date, resolves the name, and accepts a CIK', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/NVDA/quote');
    expect(status).toBe(200);
    expect(body.name).toMatch(/NVIDIA/i);
    // The fixture's latest bar (2026-02-13) predates its latest shares fact (2026-05-15): the count as of the quote is older.
    const [latest] = await svc.deps.readers.registry.query(
      `SELECT value, period_end::VARCHAR AS period_end FROM company_facts WHERE cik = 1045810 AND metric = 'shares_outstanding'`,
    );
    const [asOf] = await svc.deps.readers.registry.query(
      `SELECT value, period_end::VARCHAR AS period_end, filed::VARCHAR AS filed FROM company_share_counts
      WHERE cik = 1045810 AND period_end <= $d ORDER BY period_end DESC LIMIT 1`,
      { d: body.quote_date },
    );
    expect(String(latest.period_end) > body.quote_date).toBe(true);
    expect(String(asOf.period_end) < String(latest.period_end)).toBe(true);
    const shares = Number(asOf.value);
    expect(body.market_context).toMatchObject({
      shares_outstanding: shares,
      shares_as_of: asOf.period_end,
      shares_filed: asOf.filed,
      market_cap: Math.round(shares * body.quote.close),
    });
    expect(body.market_context.note).toMatch(/shares outstanding as of \d{4}-\d{2}-\d{2} .*on or before the quote date/);
    await expect(
      JSON.stringify(
        { quote_date: body.quote_date, adjustment: body.adjustment, close: body.quote.close, market_context: body.market_context },
        null,
        2,
      ) + '\n',
    ).toMatchFileSnapshot('../golden/quotes/nvda-market-context.json');
    const byCik = await getJson(svc.app, '/api/company/1045810/quote');
    expect(byCik.body.ticker).toBe('NVDA');
  });

  it('takes the count of an earlier quote date from the fact in force then, and the earliest fact before any filing', async () => {
    const registry = svc.deps.readers.registry;
    const history = await registry.query(
      `SELECT value, period_end::VARCHAR AS period_end FROM company_share_counts WHERE cik = 1045810 ORDER BY period_end`,
    );
    expect(history.length).toBeGreaterThan(10);
    const mid = history[Math.floor(history.length / 2)];
    // A date between two period ends uses the earlier one; the period end itself counts as "on or before".
    const next = history[Math.floor(history.length / 2) + 1];
    const between = new Date(Date.parse(String(next.period_end)) - 86_400_000).toISOString().slice(0, 10);
    const mc = await marketContext(registry, 1045810, 100, between, 'raw');
    expect(mc).toMatchObject({
      shares_as_of: mid.period_end,
      shares_outstanding: Number(mid.value),
      market_cap: Math.round(Number(mid.value) * 100),
    });
    expect((await marketContext(registry, 1045810, 100, String(next.period_end), 'raw')).shares_as_of).toBe(next.period_end);
    const early = await marketContext(registry, 1045810, 100, '1999-01-04', 'raw');
    expect(early.shares_as_of).toBe(history[0].period_end);
    expect(early.note).toMatch(/dated after the quote/);
  });
});
