/**
 * Quote history reads one ticker's rows as a narrow row-group range (issue 22): quote_bars is published sorted by
 * (ticker, adjustment, quote_date) in row groups of BAR_ROW_GROUP rows, cut into files of at most BAR_FILE_ROWS rows
 * at ticker boundaries, so the parquet statistics admit only the groups holding that ticker, in the one file the
 * chain heads store names. The latest quote and the identity card's close come from that store without reading
 * quote_bars. Asserted on the published files' metadata, the queries the answers run and the plan, never timed.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { BAR_ROW_GROUP } from '../../jobs/quotes/quotes-fold.ts';
import { BAR_FILE_ROWS, quoteHeadsOptions, quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { QUOTE_HEADS_STORE, readLatestRawClose, readQuoteHeads } from '../../lib/quote-heads.ts';
import type { Params } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { getLatestQuote, getQuoteHistory } from '../../service/quotes/quotes.queries.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { loadSql, quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { readCurrentPointer, tableFilePaths } from '../../lib/warehouse/snapshot.ts';
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

  it('writes the same chain heads when they are aggregated in batches of a few tickers', async () => {
    /** The lines of the current quote_heads store under `dataDir`, sorted (their order in the file is free). */
    const headsOf = async (dataDir: string) => {
      const ptr = (await readCurrentPointer(dataDir, 'quotes'))!;
      const text = await readFile(path.join(snapshotDir(dataDir, 'quotes', ptr.snapshot_id), 'packed', 'quote_heads.tsv'), 'utf8');
      return text.split('\n').filter(Boolean).sort();
    };
    const batched = path.join(root, 'batched');
    const saved = quoteHeadsOptions.batch;
    quoteHeadsOptions.batch = 7;
    try {
      await ingestAll(testConfig(batched), [quotesPipeline], path.join(root, 'input'));
    } finally {
      quoteHeadsOptions.batch = saved;
    }
    const whole = await headsOf(path.join(root, 'data'));
    expect(whole.length).toBeGreaterThan(20); // key 0 and more tickers than several batches hold
    expect(await headsOf(batched)).toEqual(whole);
  }, 180_000);

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

  /** A query reading quote_bars' rows (through the view or a file of it). */
  const READS_BARS = /\bFROM\s+(quote_bars|read_parquet)\b/i;

  /** Runs `fn` recording every query the quotes reader runs meanwhile (SQL text and parameters). */
  async function recordQueries<T>(
    r: SnapshotReader,
    fn: () => Promise<T>,
  ): Promise<{ result: T; queries: Array<{ sql: string; params?: Params }> }> {
    const queries: Array<{ sql: string; params?: Params }> = [];
    const query = r.query.bind(r);
    r.query = (sql: string, params?: Params) => {
      queries.push({ sql, params });
      return query(sql, params);
    };
    try {
      return { result: await fn(), queries };
    } finally {
      r.query = query;
    }
  }

  it('cuts quote_bars into files of bounded size, each ticker in exactly one file', async () => {
    const r = svc.deps.readers.quotes!;
    const files = r.tableFiles('quote_bars')!;
    expect(files.length).toBeGreaterThan(1);
    const list = `[${files.map(quoteLiteral).join(', ')}]`;
    const perFile = await r.query(
      `SELECT file_name, count(*)::INTEGER AS groups, sum(row_group_num_rows)::BIGINT AS n FROM (SELECT DISTINCT file_name, row_group_id, row_group_num_rows FROM parquet_metadata(${list})) GROUP BY file_name`,
    );
    for (const f of perFile) {
      expect(Number(f.n)).toBeLessThanOrEqual(BAR_FILE_ROWS);
      expect(Number(f.groups)).toBeLessThanOrEqual(BAR_FILE_ROWS / BAR_ROW_GROUP + 1);
    }
    const spanning = await r.query(
      `SELECT ticker FROM read_parquet(${list}, filename = true) GROUP BY ticker HAVING count(DISTINCT filename) > 1`,
    );
    expect(spanning).toEqual([]);
  });

  it('serves the latest quote and the identity close from the chain heads store, never reading quote_bars', async () => {
    const r = svc.deps.readers.quotes!;
    const [{ ticker }] = await r.query(`SELECT ticker FROM quote_bars ORDER BY hash(ticker) LIMIT 1`);
    const found = await readQuoteHeads(r, String(ticker));
    expect(found?.heads?.chains.length).toBeGreaterThan(0);
    const { result, queries } = await recordQueries(r, () => getLatestQuote({ quotes: r }, String(ticker)));
    expect(queries.filter((q) => READS_BARS.test(q.sql))).toEqual([]);
    // The head is the chain's newest bar, as the table has it.
    const [latest] = await r.query(
      `SELECT CAST(max(quote_date) AS VARCHAR) AS d FROM quote_bars WHERE ticker = $ticker AND adjustment = $adjustment`,
      { ticker: String(ticker), adjustment: result.adjustment },
    );
    expect(result.quote_date).toBe(latest.d);
    expect(result.origin_verified).toBe(true);
  });

  it("gives the identity card's close of every ticker as the raw chain's head, reading each record once per snapshot", async () => {
    const r = svc.deps.readers.quotes!;
    const store = r.packed(QUOTE_HEADS_STORE)!;
    const tickers = JSON.parse((await store.get(0))!) as string[];
    const expected = async (t: string) => {
      const raw = (await readQuoteHeads(r, t))?.heads?.chains.find((c) => c.adjustment === 'raw');
      return raw ? { quote_date: raw.head.quote_date, close: Number(raw.head.close) } : null;
    };
    // Record reads (keys > 0; key 0 is the directory) counted on the store the reader serves.
    let reads = 0;
    const get = store.get.bind(store);
    store.get = (key: number) => {
      if (key > 0) reads++;
      return get(key);
    };
    try {
      for (const t of tickers) expect(await readLatestRawClose(r, t), t).toEqual(await expected(t));
      expect(await readLatestRawClose(r, 'NO-SUCH-TICKER')).toBeNull();
      reads = 0;
      for (const t of tickers) await readLatestRawClose(r, t);
      expect(reads).toBe(0);
    } finally {
      store.get = get;
    }
  });

  it("lists a snapshot table's files once, not on every request that asks", () => {
    const r = svc.deps.readers.quotes!;
    const files = r.tableFiles('quote_bars')!;
    expect(files.length).toBeGreaterThan(0);
    expect(r.tableFiles('quote_bars')).toBe(files);
    expect(Object.isFrozen(files)).toBe(true);
  });

  it('reads a history page from the one file holding the chain', async () => {
    const r = svc.deps.readers.quotes!;
    const [{ ticker }] = await r.query(`SELECT ticker FROM quote_bars ORDER BY hash(ticker) DESC LIMIT 1`);
    const { result, queries } = await recordQueries(r, () => getQuoteHistory({ quotes: r }, String(ticker), { limit: 40 }));
    expect(result.count).toBe(40);
    expect(result.quotes.every((d) => d.origin_verified)).toBe(true);
    const reads = queries.filter((q) => READS_BARS.test(q.sql));
    expect(reads).toHaveLength(1);
    expect(reads[0].sql).toMatch(/FROM read_parquet\(\$file\)/);
    const file = String(reads[0].params?.file);
    expect(r.tableFiles('quote_bars')).toContain(file);
    // That file's plan: one parquet scan of one file, the ticker filter pushed into it.
    const plan = (await r.query(`EXPLAIN ANALYZE ${reads[0].sql}`, reads[0].params)).map((x) => String(x.explain_value)).join('\n');
    expect(plan).toMatch(/Total Files Read: 1\b/);
    expect(plan).toMatch(new RegExp(`ticker='${ticker}'`));
  });

  it('serves the default history page from the heads store, the same days as read from the file', async () => {
    const r = svc.deps.readers.quotes!;
    const [{ ticker }] = await r.query(`SELECT ticker FROM quote_bars ORDER BY hash(ticker) DESC LIMIT 1`);
    const { result, queries } = await recordQueries(r, () => getQuoteHistory({ quotes: r }, String(ticker)));
    expect(queries.filter((q) => READS_BARS.test(q.sql))).toEqual([]);
    expect(result.count).toBe(30);
    const fromFile = await getQuoteHistory({ quotes: r }, String(ticker), { limit: 40 });
    expect(result.quotes).toEqual(fromFile.quotes.slice(0, 30));
    expect(result.next_cursor).not.toBeNull(); // the sample's chains are longer than a page
  });
});
