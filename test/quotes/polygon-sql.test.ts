/**
 * A large Polygon aggregates response (≥ POLYGON_SNIFF_MIN_BYTES) is read by DuckDB alone, never parsed in JS first
 * (issue 22, item 3). Its bars and rejects must be exactly those the JS parser (ingest/quotes/formats.ts) gives for
 * the same bytes: tickers from `T` or the document, normalised; the New York date of `t` across DST changes; prices
 * rounded to 6 decimals and counts rounded as Math.round does; results lacking a field rejected with their index.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolygonAggs } from '../../ingest/quotes/formats.ts';
import { POLYGON_SNIFF_MIN_BYTES } from '../../jobs/quotes/quotes.pipeline.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { ingestQuotes, POLYGON_COUNT_EDGES, polygonResultsPastSniffSize, writeInput } from './quotes-fixture.ts';

/** Edge results: each is kept or rejected exactly as the JS parser decides. */
const EDGES: Array<Record<string, unknown>> = [
  { T: 'brk.b', o: 1.2345675, h: 2.0000005, l: 1, c: 1.5, v: 100.5, vw: 1.23456749, n: 2.5, t: Date.UTC(2024, 2, 10, 5) }, // DST starts that day
  { T: null, o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 10, 3, 4) }, // no ticker: the document's
  { T: 'X', o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 10, 4, 4, 59, 59) }, // 23:59:59 New York: the 3rd
  { T: 'X', o: 10, h: 11, l: 9, c: 10, v: 1000, t: 1712721600000.5 }, // fractional epoch milliseconds
  { T: 'Y', o: '10', h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 0, 2, 5) }, // a price as a string: reject
  { T: 'Y', o: 10, h: 11, l: 9, c: 10, v: 1000 }, // no timestamp: reject
  { T: 'Y', o: 10, h: 11, l: 9, c: 10, t: Date.UTC(2024, 0, 3, 5) }, // no volume: reject
  { T: 'bad ticker!', o: 10, h: 11, l: 9, c: 10, v: 1, t: Date.UTC(2024, 0, 4, 5) }, // not a ticker: reject
  { T: 'Z', o: 123456.7891235, h: 123456.79, l: 0.0000004, c: 0.0000005, v: 2.4999, vw: null, n: 'x', t: Date.UTC(2024, 0, 5, 5) },
  { T: 123, o: 10, h: 11, l: 9, c: 10, v: 2e-7, vw: -0, n: 1e3, t: Date.UTC(2024, 0, 8, 5) }, // a number or a boolean as ticker: its text
  { T: true, o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 0, 9, 5) },
  { T: 'Y', o: 10, h: true, l: [9], c: { c: 10 }, v: 1000, t: Date.UTC(2024, 0, 10, 5) }, // prices that are not numbers: reject
  { T: 'Q"x', o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 0, 11, 5) }, // an escaped ticker (not a ticker: reject)
  ...POLYGON_COUNT_EDGES,
];

let dir: string;
let bytes: Buffer;
let reader: SnapshotReader;
beforeAll(async () => {
  dir = await tempDir('proofline-polygon-sql-');
  const input = path.join(dir, 'input');
  // Filler bars of many tickers, enough to pass the size at which the file is not parsed in JS.
  const results = polygonResultsPastSniffSize(EDGES);
  const doc = { ticker: 'DOC', queryCount: 1, resultsCount: results.length, adjusted: false, results, status: 'OK' };
  await writeInput(input, 'polygon/large.json', JSON.stringify(doc));
  bytes = await readFile(path.join(input, 'quotes/polygon/large.json'));
  expect(bytes.byteLength).toBeGreaterThanOrEqual(POLYGON_SNIFF_MIN_BYTES);
  const report = await ingestQuotes(testConfig(path.join(dir, 'data')), input);
  expect(report.children.filter((c) => c.status === 'failed').map((c) => c.error)).toEqual([]);
  reader = await SnapshotReader.open(path.join(dir, 'data'), 'quotes', { poolSize: 1 });
}, 300_000);
afterAll(async () => {
  await reader?.close();
  await removeDir(dir);
});

describe('a large Polygon aggregates response read by DuckDB alone', () => {
  it('gives every bar the JS parser gives, field for field', async () => {
    const expected = parsePolygonAggs(bytes, 'large.json');
    const rows = await reader.query(
      `SELECT ticker, CAST(quote_date AS VARCHAR) AS quote_date, adjustment, open::DOUBLE AS open, high::DOUBLE AS high, low::DOUBLE AS low,
              close::DOUBLE AS close, volume::DOUBLE AS volume, vwap::DOUBLE AS vwap, trade_count::DOUBLE AS trade_count
       FROM quote_bars ORDER BY ticker, quote_date`,
    );
    const want = expected.bars
      .map((b) => ({ ...b }))
      .sort((a, b) => (a.ticker === b.ticker ? a.quote_date.localeCompare(b.quote_date) : a.ticker < b.ticker ? -1 : 1));
    expect(rows.length).toBe(want.length);
    expect(rows).toEqual(want);
    // The edges, spelled out: normalised tickers, the document's ticker, New York dates.
    expect(rows.filter((r) => ['BRK-B', 'DOC', 'X', 'Z'].includes(String(r.ticker)))).toEqual([
      expect.objectContaining({ ticker: 'BRK-B', quote_date: '2024-03-10', volume: 101, trade_count: 3 }),
      expect.objectContaining({ ticker: 'DOC', quote_date: '2024-11-03' }),
      expect.objectContaining({ ticker: 'X', quote_date: '2024-04-10' }),
      expect.objectContaining({ ticker: 'X', quote_date: '2024-11-03' }),
      expect.objectContaining({ ticker: 'Z', low: 0, volume: 2, vwap: null, trade_count: null }),
    ]);
    // Counts at BIGINT's edges: kept inside its range, the trade counts outside it NULL.
    expect(rows.filter((r) => r.ticker === 'V').map((r) => [r.quote_date, r.volume, r.trade_count])).toEqual([
      ['2024-01-17', 2 ** 63 - 1024, null],
      ['2024-01-18', -(2 ** 63), null],
    ]);
  });

  it('rejects the results the JS parser rejects, with their index and text', async () => {
    const expected = parsePolygonAggs(bytes, 'large.json');
    const rejects = await reader.query(
      `SELECT line::INTEGER AS line, reason, raw FROM rejects WHERE file LIKE '%large.json' ORDER BY line`,
    );
    expect(rejects).toEqual(expected.rejects);
    expect(rejects.map((r) => r.line)).toEqual([4, 5, 6, 7, 11, 12, 13, 14]);
  });
});
