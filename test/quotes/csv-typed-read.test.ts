/**
 * A quote CSV is read typed first (`read_csv` types prices as DECIMAL(18,6) and counts as DOUBLE itself; the ticker
 * and the trading day computed once per distinct symbol and timestamp text and joined back), and the
 * TRY_CAST read (every field as text, typed again in SQL) is the fallback when the typed read fails or finds a row
 * that is not a bar (jobs/quotes/quotes.pipeline.ts readCsvTyped; issue 22 item 3). This pins that:
 *  - for every text, the reader either fails or gives exactly TRY_CAST's value (crafted edge texts and generated
 *    numeric-looking texts), so a typed read that succeeds is the TRY_CAST read;
 *  - ingesting the real fixtures and crafted files typed and with the TRY_CAST read only gives the same bars (every
 *    column, leaf hashes included), the same parts' bytes and the same rejects (file, line, raw text); files with
 *    rejects or texts the reader cannot type are read the TRY_CAST way;
 *  - a volume out of BIGINT's range (`1e30`, `inf`, `nan`) is one rejected row, not a failed file (it failed before).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../jobs/processors.ts';
import { quoteCsvOptions } from '../../jobs/quotes/quotes.pipeline.ts';
import { openDatabase, queryRows, quoteLiteral, type DuckDBConnection, type DuckDBInstance } from '../../lib/warehouse/duckdb.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { fixture } from '../helpers/shared.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { ingestQuotes, writeInput } from './quotes-fixture.ts';

const SDK = 'timestamp,symbol,open,high,low,close,volume,vwap,trade_count';
const DAILY = 'Date,symbol,Open,High,Low,Close,Volume,Trades,VWAP';

/** Valid bars whose texts sit at the edges of the typing: signs, spaces, exponents, rounding, quotes, empties, DST. */
const EDGES = [
  SDK,
  '2024-03-08 05:00:00+00:00,brk.b,+1.5, 1.6,1.4 ,1.5,1e3,1.2345675,2.5',
  '2024-03-11 04:00:00+00:00,BRK.B,1.2345665,"1.6",.5,1.,100.5,,',
  '2024-03-12 04:00:00+00:00,BRK.B,1_000,1e3,999.9999995,1000,"2000",0.1e1,""',
  '2024-03-13 13:30:00+00:00,brk/b,10,11,9,10,1000,10.0000005,7',
  '2024-03-14 04:00:00+00:00,BRK.B,-0,0.00000049,0.0000005,00012.5,1.50000000000000000001,-1.2345665,1e2',
  '2024-03-15T04:00:00Z,BRK.B,10,11,9,10,9.2233720368547e18,\t10,3',
  '2024-11-03 04:00:00+00:00,X,123456789.1234564,10,9,10,0,10,0',
];
/** The adjusted layout, with a byte-order mark and CRLF line ends. */
const DAILY_EDGES = `\uFEFF${[DAILY, '2024-01-02 05:00:00+00:00,spy,470.1,471.2,469.3,470.5,1234567.0,8910.0,470.4', '2024-01-03 05:00:00+00:00,SPY,470,471,469,470,1.5e6,,'].join('\r\n')}\r\n`;
/** Rows that are not bars (rejected by both reads) beside valid ones; the reader cannot type some of these texts. */
const REJECTS = [
  SDK,
  '2024-01-02 05:00:00+00:00,AAA,10,11,9,10,100,10,1',
  '2024-01-03 05:00:00+00:00,AAA,abc,11,9,10,100,10,1',
  '2024-01-04 05:00:00+00:00,AAA,10,11,9,,100,10,1',
  '2024-01-05 05:00:00+00:00,bad ticker!,10,11,9,10,100,10,1',
  '2024-01-08 05:00:00+00:00,AAA,10,11,9,10,1e30,10,1',
  '2024-01-09 05:00:00+00:00,AAA,10,11,9,10,inf,10,nan',
  '2024-01-10 05:00:00+00:00,AAA,10,11,9,10,100,10,1e30',
  'not a date,AAA,10,11,9,10,100,10,1',
  '2024-01-11 05:00:00+00:00,AAA,10,11,9,10,"1,000",10,1',
  '2024-01-12 05:00:00+00:00,AAA,10,11,9,1000000000000,100,10,1',
];
/** Prices near DECIMAL(18,6)'s top: the range checks multiply them by 1.2 (a bar, not an overflow that fails the file). */
const LARGE_PRICES = [
  SDK,
  '2024-02-01 05:00:00+00:00,BIG,90000000000,99000000000,85000000000,90000000000,10,90000000000,1',
  '2024-02-02 05:00:00+00:00,BIG,700000000000,999999999999.5,600000000000,700000000000,10,,1',
  '2024-02-05 05:00:00+00:00,BIG,100000000000,100000000000,70000000000,100000000000,10,100000000000,1',
];
/** No rejected row, but a vwap text the reader cannot type (TRY_CAST makes it NULL): read the TRY_CAST way. */
const UNTYPABLE = [DAILY, '2024-01-02 05:00:00+00:00,BBB,10,11,9,10,100,1,n/a', '2024-01-03 05:00:00+00:00,BBB,10,11,9,10,100,2,10.5'];

const FIXTURE_FILES = async () =>
  (
    await Promise.all(['alpaca-daily', 'alpaca-sdk'].map(async (d) => (await readdir(fixture(`sec/quotes/${d}`))).map((f) => `${d}/${f}`)))
  ).flat();

/** The part directories a CSV child writes (jobs/quotes/quotes-fold.ts). */
const PART_DIRS = ['quote_bar_folds', 'quote_bar_lines', 'quote_leaf_key_parts', 'quote_bar_tails', 'quote_file_chains'];

type Run = { report: RunReport; reader: SnapshotReader; dataDir: string };
let dir: string;
const runs = new Map<'typed' | 'try_cast', Run>();

beforeAll(async () => {
  dir = await tempDir('proofline-csv-typed-');
  const input = path.join(dir, 'in');
  for (const f of await FIXTURE_FILES()) await writeInput(input, `fixtures/${f}`, await readFile(fixture(`sec/quotes/${f}`), 'utf8'));
  await writeInput(input, 'crafted/edges.csv', `${EDGES.join('\n')}\n`);
  await writeInput(input, 'crafted/daily-edges.csv', DAILY_EDGES);
  await writeInput(input, 'crafted/rejects.csv', `${REJECTS.join('\n')}\n`);
  await writeInput(input, 'crafted/large-prices.csv', `${LARGE_PRICES.join('\n')}\n`);
  await writeInput(input, 'crafted/untypable.csv', `${UNTYPABLE.join('\n')}\n`);
  for (const mode of ['typed', 'try_cast'] as const) {
    quoteCsvOptions.typed = mode === 'typed';
    try {
      const config = testConfig(path.join(dir, `data-${mode}`));
      const report = await ingestQuotes(config, input);
      if (report.failed_children) throw new Error(JSON.stringify(report.children));
      runs.set(mode, { report, reader: await SnapshotReader.open(config.dataDir, 'quotes', { poolSize: 1 }), dataDir: config.dataDir });
    } finally {
      quoteCsvOptions.typed = true;
    }
  }
}, 300_000);
afterAll(async () => {
  for (const r of runs.values()) await r.reader.close();
  await removeDir(dir);
});

describe('the typed read of a quote CSV', () => {
  it('is taken for the fixtures and valid crafted files, and not for files with rejects or untypable texts', () => {
    const typedOf = (mode: 'typed' | 'try_cast') =>
      Object.fromEntries(runs.get(mode)!.report.children.map((c) => [c.key, (c.detail as { typed?: boolean } | undefined)?.typed]));
    const typed = typedOf('typed');
    expect(Object.keys(typed).length).toBeGreaterThanOrEqual(14);
    for (const [key, t] of Object.entries(typed))
      expect([key, t]).toEqual([key, !key.endsWith('rejects.csv') && !key.endsWith('untypable.csv')]);
    expect(Object.values(typedOf('try_cast')).every((t) => t === false)).toBe(true);
  });

  it('keeps each file’s row order (the ticker and day are joined back per distinct text): the fold finds the same files in key order', () => {
    const orderedOf = (mode: 'typed' | 'try_cast') =>
      Object.fromEntries(runs.get(mode)!.report.children.map((c) => [c.key, (c.detail as { ordered?: boolean } | undefined)?.ordered]));
    const typed = orderedOf('typed');
    expect(typed).toEqual(orderedOf('try_cast'));
    expect(Object.entries(typed).filter(([k, o]) => k.startsWith('fixtures/') && o === true).length).toBeGreaterThanOrEqual(10);
  });

  it('gives the TRY_CAST read’s bars, every column, leaf hashes included', async () => {
    const bars = (mode: 'typed' | 'try_cast') =>
      runs.get(mode)!.reader.query(
        `SELECT * REPLACE (CAST(quote_date AS VARCHAR) AS quote_date, CAST(open AS VARCHAR) AS open, CAST(high AS VARCHAR) AS high,
            CAST(low AS VARCHAR) AS low, CAST(close AS VARCHAR) AS close, CAST(vwap AS VARCHAR) AS vwap, CAST(volume AS VARCHAR) AS volume,
            CAST(trade_count AS VARCHAR) AS trade_count, CAST(leaf_key AS VARCHAR) AS leaf_key)
         FROM quote_bars ORDER BY ticker, adjustment, quote_date`,
      );
    const typed = await bars('typed');
    expect(typed.length).toBeGreaterThan(5_000);
    expect(typed).toEqual(await bars('try_cast'));
    // The edges as TRY_CAST types them (rounding half away from zero at the sixth decimal, exponents, `_`, spaces).
    const edges = typed.filter((r) => r.ticker === 'BRK-B');
    expect(edges.map((r) => [r.quote_date, r.open, r.high, r.low, r.close, r.volume, r.vwap, r.trade_count])).toEqual([
      ['2024-03-08', '1.500000', '1.600000', '1.400000', '1.500000', '1000', '1.234568', '3'],
      ['2024-03-11', '1.234567', '1.600000', '0.500000', '1.000000', '101', null, null],
      ['2024-03-12', '1000.000000', '1000.000000', '1000.000000', '1000.000000', '2000', '1.000000', null],
      ['2024-03-13', '10.000000', '11.000000', '9.000000', '10.000000', '1000', '10.000001', '7'],
      ['2024-03-14', '0.000000', '0.000000', '0.000001', '12.500000', '2', '-1.234567', '100'],
      ['2024-03-15', '10.000000', '11.000000', '9.000000', '10.000000', '9223372036854700032', '10.000000', '3'],
    ]);
  });

  it('writes the same parts (bars, lines, leaf keys, tails, chains), byte for byte', async () => {
    const parts = async (mode: 'typed' | 'try_cast') => {
      const files = (await readdir(runs.get(mode)!.dataDir, { recursive: true })).filter((f) =>
        new RegExp(`(${PART_DIRS.join('|')})/[^/]*\\.parquet$`).test(f.split(path.sep).join('/')),
      );
      return new Map(
        await Promise.all(
          files.map(
            async (f) =>
              [f.split(path.sep).slice(-2).join('/'), (await readFile(path.join(runs.get(mode)!.dataDir, f))).toString('base64')] as const,
          ),
        ),
      );
    };
    const typed = await parts('typed');
    for (const d of PART_DIRS) expect([d, [...typed.keys()].some((k) => k.startsWith(`${d}/`))]).toEqual([d, true]);
    expect([...typed.keys()].sort()).toEqual([...(await parts('try_cast')).keys()].sort());
    const other = await parts('try_cast');
    for (const [k, v] of typed) expect([k, v === other.get(k)]).toEqual([k, true]);
  });

  it('reports the same rejects, with file, line and raw text', async () => {
    const rejects = (mode: 'typed' | 'try_cast') =>
      runs.get(mode)!.reader.query(`SELECT file, line::INTEGER AS line, reason, raw FROM rejects ORDER BY file, line`);
    const typed = await rejects('typed');
    expect(typed).toEqual(await rejects('try_cast'));
    expect(typed.map((r) => [r.file, r.line, r.raw])).toEqual([
      ['crafted/rejects.csv', 3, '2024-01-03 05:00:00+00:00,AAA,abc,11,9,10,100,10,1'],
      ['crafted/rejects.csv', 4, '2024-01-04 05:00:00+00:00,AAA,10,11,9,100,10,1'],
      ['crafted/rejects.csv', 5, '2024-01-05 05:00:00+00:00,bad ticker!,10,11,9,10,100,10,1'],
      ['crafted/rejects.csv', 6, '2024-01-08 05:00:00+00:00,AAA,10,11,9,10,1e30,10,1'],
      ['crafted/rejects.csv', 7, '2024-01-09 05:00:00+00:00,AAA,10,11,9,10,inf,10,nan'],
      ['crafted/rejects.csv', 9, 'not a date,AAA,10,11,9,10,100,10,1'],
      ['crafted/rejects.csv', 10, '2024-01-11 05:00:00+00:00,AAA,10,11,9,10,1,000,10,1'],
      ['crafted/rejects.csv', 11, '2024-01-12 05:00:00+00:00,AAA,10,11,9,1000000000000,100,10,1'],
    ]);
  });

  it('stores bars priced near the DECIMAL range with their range flags, without failing the file', async () => {
    for (const mode of ['typed', 'try_cast'] as const) {
      const rows = await runs
        .get(mode)!
        .reader.query(
          `SELECT CAST(quote_date AS VARCHAR) AS d, CAST(high AS VARCHAR) AS high, flags FROM quote_bars WHERE ticker = 'BIG' ORDER BY quote_date`,
        );
      expect(rows.map((r) => [r.d, r.high, (r.flags as string[]).slice()])).toEqual([
        ['2024-02-01', '99000000000.000000', []],
        ['2024-02-02', '999999999999.500000', ['high_above_range']],
        ['2024-02-05', '100000000000.000000', ['low_below_range']],
      ]);
    }
  });

  it('keeps a row whose trade count is out of range, without the count (as a vwap that is not a number)', async () => {
    const [row] = await runs
      .get('typed')!
      .reader.query(
        `SELECT volume::INTEGER AS volume, trade_count, CAST(vwap AS VARCHAR) AS vwap FROM quote_bars WHERE ticker = 'AAA' AND quote_date = DATE '2024-01-10'`,
      );
    expect(row).toEqual({ volume: 100, trade_count: null, vwap: '10.000000' });
    const [bbb] = await runs
      .get('typed')!
      .reader.query(`SELECT vwap FROM quote_bars WHERE ticker = 'BBB' AND quote_date = DATE '2024-01-02'`);
    expect(bbb).toEqual({ vwap: null });
  });
});

describe('read_csv typing against TRY_CAST', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  let tmp: string;
  beforeAll(async () => {
    tmp = await tempDir('proofline-csv-cast-');
    db = await openDatabase(':memory:', { threads: 1 });
    conn = await db.connect();
  });
  afterAll(async () => {
    conn.closeSync();
    db.closeSync();
    await removeDir(tmp);
  });

  /** The reader's value of `text` as column type `type` (as text), or 'error'; and TRY_CAST's of the same field. */
  async function both(text: string, type: string, n: number): Promise<{ reader: unknown; tryCast: unknown }> {
    const file = path.join(tmp, `v${n}.csv`);
    await writeFile(file, `k,x\n1,${text}\n`);
    const opts = `header = true, auto_detect = false`;
    const [{ v: tryCast }] = await queryRows(
      conn,
      `SELECT CAST(TRY_CAST(nullif(x, '') AS ${type}) AS VARCHAR) AS v FROM read_csv(${quoteLiteral(file)}, ${opts}, all_varchar = true, columns = {'k': 'VARCHAR', 'x': 'VARCHAR'})`,
    );
    let reader: unknown;
    try {
      const rows = await queryRows(
        conn,
        `SELECT CAST(x AS VARCHAR) AS v FROM read_csv(${quoteLiteral(file)}, ${opts}, columns = {'k': 'VARCHAR', 'x': '${type}'})`,
      );
      reader = rows.length === 1 ? rows[0].v : `rows: ${rows.length}`;
    } catch {
      reader = 'error';
    }
    return { reader, tryCast };
  }

  const TEXTS = [
    '1',
    '1.5',
    '-1.5',
    '+1.5',
    '.5',
    '5.',
    ' 1.5',
    '1.5 ',
    '\t1.5',
    '1e3',
    '1E-2',
    '1.2345675',
    '1.2345665',
    '-1.2345665',
    '0.0000005',
    '0.00000049',
    '999999999999.999999',
    '999999999999.9999995',
    '1000000000000',
    '-999999999999.999999',
    '1_000',
    '1__0',
    '_1',
    '0x10',
    'inf',
    '-inf',
    'nan',
    'NaN',
    'Infinity',
    '-0',
    '00012.5',
    '"1.5"',
    '1.5e',
    '--1',
    '１',
    '٣',
    'null',
    'NULL',
    '"  "',
    '""',
    '',
    '1.',
    '1e-7',
    '12345678901234567890',
    '1e30',
    '1e400',
    '"1,5"',
    '1.50000000000000000001',
    '0.1e1',
    '1d',
    '1f',
    '1 000',
    "1'000",
    '+',
    '-',
    '.',
    'e5',
    '1e+5',
    '1e-400',
    '0000000000000000000001.5',
    '"\u00a01.5"',
  ];
  let n = 0;
  it.each(['DECIMAL(18,6)', 'DOUBLE'])('%s: the reader fails or gives TRY_CAST’s value, for crafted texts', async (type) => {
    for (const text of TEXTS) {
      const { reader, tryCast } = await both(text, type, n++);
      if (reader !== 'error') expect([text, reader]).toEqual([text, tryCast]);
      else expect([text, 'reader error']).toEqual([text, 'reader error']);
    }
  });

  it.each(['DECIMAL(18,6)', 'DOUBLE'])('%s: the reader fails or gives TRY_CAST’s value, for generated numeric texts', async (type) => {
    const chars = fc.constantFrom(...'0123456789.-+eE_ x'.split(''));
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: chars, minLength: 1, maxLength: 24 }), async (text) => {
        const { reader, tryCast } = await both(text, type, n++);
        return reader === 'error' || reader === tryCast;
      }),
      { numRuns: 300, seed: 22 },
    );
  });
});
