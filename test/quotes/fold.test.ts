import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { FLAGS_SQL } from '../../jobs/quotes/quotes-fold.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { QUOTE_FLAGS } from '../../ingest/quotes/quote.schema.ts';
import type { Config } from '../../lib/config.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest, tableFilePaths } from '../../lib/warehouse/snapshot.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { verifyQuoteChain } from '../../service/quotes/quotes.queries.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { linkQuoteFixtures, writeInput } from './quotes-fixture.ts';

/** Runs the quotes pipeline (2 children at a time) and returns the derive plan line it logged. */
async function ingestLogged(config: Config, inputDir: string): Promise<string> {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
  await runPipelineInProcess(quotesPipeline, { config, log, inputDir, force: true, backoffMs: 1, concurrency: 2 });
  return lines.map((l) => JSON.parse(l).msg as string).find((m) => m.startsWith('quotes derive: plan')) ?? '';
}

const BARS = `SELECT ticker, adjustment, CAST(quote_date AS VARCHAR) AS quote_date, day_index, leaf_hash, leaf_key::VARCHAR AS leaf_key, flags FROM quote_bars`;

describe.skipIf(!HAS_SHARED)('per-file chain folds (children) against the general publish-time fold', () => {
  let dir: string;
  let fast: SnapshotReader;
  let general: SnapshotReader;
  let disjoint: SnapshotReader;
  let fastPlan = '';
  let generalPlan = '';
  let disjointPlan = '';
  const files = ['alpaca-daily/NVDA_1Day.csv', 'alpaca-daily/AAPL_1Day.csv', 'alpaca-sdk/MSFT.csv'];
  beforeAll(async () => {
    dir = await tempDir();
    // Run C: three files with disjoint (ticker, adjustment) ranges → concatenated in key order without a sort.
    const c = path.join(dir, 'c');
    await linkQuoteFixtures(c, files);
    // …plus a file with one unparseable row between two good ones (a reject; the chain skips it).
    const qqq = readFileSync(fixture('sec/quotes/alpaca-daily/QQQ_1Day.csv'), 'utf8').split('\n');
    await writeInput(c, 'bad/QQQ_bad.csv', [qqq[0], qqq[1], qqq[2].replace(/,[0-9.]+,/, ',n/a,'), qqq[3]].join('\n') + '\n');
    disjointPlan = await ingestLogged(testConfig(path.join(dir, 'data-c')), c);
    // Run A: the same plus one file holding TSLA then AMD (ranges overlap, rows out of key order), each chain in one
    // file → the children's leaves are published as they are, sorted at publish.
    const a = path.join(dir, 'a');
    await linkQuoteFixtures(a, files);
    const mix = ['TSLA', 'AMD'].map((t) =>
      readFileSync(fixture(`sec/quotes/alpaca-daily/${t}_1Day.csv`), 'utf8')
        .trim()
        .split('\n'),
    );
    await writeInput(a, 'mix/TSLA_AMD.csv', [mix[0][0], ...mix[0].slice(1), ...mix[1].slice(1)].join('\n') + '\n');
    fastPlan = await ingestLogged(testConfig(path.join(dir, 'data-a')), a);
    // Run B: the same files plus one more MSFT raw day in a second file → that chain spans two files → general fold.
    const b = path.join(dir, 'b');
    await linkQuoteFixtures(b, files);
    await writeInput(b, 'mix/TSLA_AMD.csv', readFileSync(path.join(a, 'quotes', 'mix/TSLA_AMD.csv'), 'utf8'));
    const header = readFileSync(fixture('sec/quotes/alpaca-sdk/MSFT.csv'), 'utf8').split('\n')[0];
    await writeInput(
      b,
      'zz-tail/MSFT_tail.csv',
      `${header}\n2025-10-31 04:00:00+00:00,MSFT,528.88,529.32,514.43,517.81,34006405.0,520.2,700000.0\n`,
    );
    generalPlan = await ingestLogged(testConfig(path.join(dir, 'data-b')), b);
    fast = await SnapshotReader.open(path.join(dir, 'data-a'), 'quotes', { poolSize: 1 });
    general = await SnapshotReader.open(path.join(dir, 'data-b'), 'quotes', { poolSize: 1 });
    disjoint = await SnapshotReader.open(path.join(dir, 'data-c'), 'quotes', { poolSize: 1 });
  }, 120_000);
  afterAll(async () => {
    await fast?.close();
    await general?.close();
    await disjoint?.close();
    await removeDir(dir);
  });

  it('takes the fast path only when no chain spans several files', () => {
    expect(disjointPlan).toMatch(/plan: per-file folds \(disjoint per-file chains\)/);
    expect(fastPlan).toMatch(/plan: per-file folds \(per-file chains \(1 overlapping group sorted at publish\)\)/);
    expect(generalPlan).toMatch(/plan: general \(1 chains span several files\)/);
  });

  it('publishes byte-identical leaves, day indexes, keys and flags on both paths', async () => {
    const a = await fast.query(`${BARS} ORDER BY ticker, adjustment, quote_date`);
    const b = await general.query(
      `${BARS} WHERE NOT (ticker = 'MSFT' AND quote_date = DATE '2025-10-31') ORDER BY ticker, adjustment, quote_date`,
    );
    expect(a.length).toBeGreaterThan(2000);
    expect(b).toEqual(a);
    expect(await disjoint.query(`${BARS} WHERE ticker <> 'QQQ' ORDER BY ticker, adjustment, quote_date`)).toEqual(
      a.filter((r) => r.ticker !== 'AMD' && r.ticker !== 'TSLA'),
    );
    const [tail] = await general.query(`SELECT day_index FROM quote_bars WHERE ticker = 'MSFT' AND quote_date = DATE '2025-10-31'`);
    const [last] = await fast.query(`SELECT max(day_index) AS d FROM quote_bars WHERE ticker = 'MSFT'`);
    expect(tail.day_index).toBe(Number(last.d) + 1);
  });

  it('makes the children parts the quote_bars files on the concatenated path (linked: same rows, columns and order)', async () => {
    const manifest = (await readCurrentManifest(path.join(dir, 'data-c'), 'quotes'))!;
    const tm = manifest.tables.quote_bars;
    expect(Object.keys(tm.files ?? {})).toHaveLength(4);
    const files = tableFilePaths(snapshotDir(path.join(dir, 'data-c'), 'quotes', manifest.snapshot_id), 'quote_bars', tm);
    const fromParquet =
      await disjoint.query(`SELECT ticker, adjustment, CAST(quote_date AS VARCHAR) AS quote_date, day_index, leaf_hash, leaf_key::VARCHAR AS leaf_key, flags
      FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}])`);
    expect(fromParquet).toEqual(await disjoint.query(`${BARS} ORDER BY ticker, adjustment, quote_date`));
    expect(tm.rows).toBe(fromParquet.length);
    expect(tm.storage).toBe('parquet');
    // quote_leaf_keys: one part per input file too, each sorted by leaf_key, covering every bar.
    const km = manifest.tables.quote_leaf_keys;
    expect(km.storage).toBe('parquet');
    expect(Object.keys(km.files ?? {})).toHaveLength(4);
    const keyFiles = tableFilePaths(snapshotDir(path.join(dir, 'data-c'), 'quotes', manifest.snapshot_id), 'quote_leaf_keys', km);
    for (const f of keyFiles) {
      const [o] = await disjoint.query(`SELECT count(*) FILTER (WHERE NOT ok)::INTEGER AS out_of_order FROM (
        SELECT coalesce(leaf_key >= lag(leaf_key) OVER (ORDER BY n), true) AS ok FROM (SELECT *, row_number() OVER () AS n FROM read_parquet('${f}')))`);
      expect(o.out_of_order).toBe(0);
    }
    expect(km.rows).toBe(tm.rows);
    // The sorted-at-publish path sorts the files whose key ranges overlap (the TSLA_AMD file and those inside its
    // range) into one file; the files outside it stay as their parts (linked).
    const fastFiles = Object.keys((await readCurrentManifest(path.join(dir, 'data-a'), 'quotes'))!.tables.quote_bars.files ?? {});
    expect(fastFiles.length).toBeGreaterThan(1);
    expect(fastFiles.length).toBeLessThan(Object.keys(km.files ?? {}).length + 1);
  });

  it('sends a file that repeats a key (in key order or not) to the general path: duplicate rejected, correction kept as a fork', async () => {
    for (const sorted of [true, false]) {
      const input = path.join(dir, `d-${sorted}`);
      const rows = readFileSync(fixture('sec/quotes/alpaca-daily/QQQ_1Day.csv'), 'utf8').split('\n').slice(0, 4);
      const corrected = rows[2].replace(/,([0-9.]+)$/, (_m, v) => `,${(Number(v) + 0.01).toFixed(2)}`);
      const body = sorted ? [rows[1], rows[2], corrected, rows[3], rows[3]] : [rows[3], rows[1], rows[2], rows[3], corrected];
      await writeInput(input, 'QQQ_dups.csv', [rows[0], ...body].join('\n') + '\n');
      const data = path.join(dir, `data-d-${sorted}`);
      expect(await ingestLogged(testConfig(data), input)).toMatch(/plan: general \(a file repeats a key\)/);
      const reader = await SnapshotReader.open(data, 'quotes', { poolSize: 1 });
      try {
        expect((await reader.query(`SELECT reason FROM rejects`)).map((r) => String(r.reason))).toEqual([
          expect.stringMatching(/^duplicate bar for QQQ/),
        ]);
        expect(await reader.query(`SELECT reason FROM quote_leaf_history`)).toEqual([{ reason: 'superseded_in_input' }]);
        expect((await verifyQuoteChain(reader, 'QQQ')).chains[0]).toMatchObject({ days: 3, valid: true });
      } finally {
        await reader.close();
      }
    }
  });

  it('rejects an unparseable row with its line and chains the rows around it', async () => {
    expect(await disjoint.query(`SELECT file, line::INTEGER AS line, raw FROM rejects`)).toEqual([
      { file: 'bad/QQQ_bad.csv', line: 3, raw: expect.stringContaining('n/a') },
    ]);
    expect(
      (await disjoint.query(`SELECT day_index FROM quote_bars WHERE ticker = 'QQQ' ORDER BY quote_date`)).map((r) => r.day_index),
    ).toEqual([0, 1]);
    expect((await verifyQuoteChain(disjoint, 'QQQ')).valid).toBe(true);
  });

  it.each([
    ['sorted at publish', () => fast],
    ['concatenated', () => disjoint],
  ] as const)('stores quote_bars in key order and quote_leaf_keys for every bar on the fast path (%s)', async (_, reader) => {
    const [o] = await reader().query(`SELECT count(*) FILTER (WHERE NOT ok)::INTEGER AS out_of_order FROM (
      SELECT coalesce((ticker, adjustment, quote_date) > lag((ticker, adjustment, quote_date)) OVER (ORDER BY n), true) AS ok
      FROM (SELECT *, row_number() OVER () AS n FROM quote_bars))`);
    expect(o.out_of_order).toBe(0);
    const [k] = await reader().query(
      `SELECT (SELECT count(*) FROM quote_leaf_keys)::INTEGER AS keys, (SELECT count(*) FROM quote_bars)::INTEGER AS bars`,
    );
    expect(k.keys).toBe(k.bars);
  });
});

describe('the validation flags', () => {
  it('are the documented set: every flag the SQL can set has a meaning in QUOTE_FLAGS, and every documented flag can be set', () => {
    const emitted = [...FLAGS_SQL.matchAll(/THEN '([a-z_]+)'/g)].map((m) => m[1]).sort();
    expect(emitted).toEqual(Object.keys(QUOTE_FLAGS).sort());
  });
});
