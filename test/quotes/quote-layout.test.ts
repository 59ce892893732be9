/**
 * Quote history reads one ticker's rows as a narrow row-group range (issue 22): quote_bars is published sorted by
 * (ticker, adjustment, quote_date) in row groups of BAR_ROW_GROUP rows, so the parquet statistics admit only the
 * groups holding that ticker. Asserted on the published file's metadata and on the plan, never timed.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { BAR_ROW_GROUP } from '../../jobs/quotes/quotes-fold.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { loadSql, quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { tableFilePaths } from '../../lib/warehouse/snapshot.ts';
import { buildTestService, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

describe('quote_bars layout over the small quotes sample', () => {
  let root: string;
  let svc: TestService;

  beforeAll(async () => {
    root = await tempDir('quote-layout-');
    const input = path.join(root, 'input');
    await ensureSample(input, { scale: 'small', seed: 42, generators: [quotesSampleGenerator] });
    const config = testConfig(path.join(root, 'data'));
    await ingestAll(config, [quotesPipeline], input);
    svc = await buildTestService(config, ['quotes']);
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  it('keeps one ticker in the few row groups its rows fill, in one file', async () => {
    const r = svc.deps.readers.quotes!;
    const m = r.manifest!;
    const files = tableFilePaths(snapshotDir(path.join(root, 'data'), 'quotes', m.snapshot_id), 'quote_bars', m.tables.quote_bars);
    const groups = await r.query(
      `SELECT file_name, row_group_id, stats_min, stats_max FROM parquet_metadata([${files.map(quoteLiteral).join(', ')}]) WHERE path_in_schema = 'ticker'`,
    );
    expect(groups.length).toBeGreaterThan(10); // enough groups for the assertion to mean something
    const tickers = await r.query(`SELECT ticker, count(*)::INTEGER AS n FROM quote_bars GROUP BY ticker ORDER BY hash(ticker) LIMIT 40`);
    for (const { ticker, n } of tickers) {
      const admitting = groups.filter((g) => String(g.stats_min) <= String(ticker) && String(ticker) <= String(g.stats_max));
      // A run of n rows spans at most ceil(n / group size) + 1 groups, in one file.
      expect(admitting.length).toBeLessThanOrEqual(Math.ceil(Number(n) / BAR_ROW_GROUP) + 1);
      expect(new Set(admitting.map((g) => g.file_name)).size).toBe(1);
    }
  });

  it('pushes the ticker filter of a history read into the parquet scan', async () => {
    const r = svc.deps.readers.quotes!;
    const sql = loadSql('../../service/quotes/quote-rows.sql', import.meta.url);
    const rows = await r.query(`EXPLAIN ${sql}`, { ticker: 'AAPL', adjustment: 'raw', to: '2026-11-20', from: null, limit: 30 });
    const plan = rows.map((x) => String(x.explain_value)).join('\n');
    expect(plan).toMatch(/READ_PARQUET|TABLE_SCAN/);
    expect(plan).toMatch(/Filters:[\s\S]*ticker='AAPL'/);
  });
});
