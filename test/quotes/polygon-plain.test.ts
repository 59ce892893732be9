/**
 * A Polygon aggregates response whose results are all plain (a string `T` without escapes, every other member a finite
 * number: ingest/quotes/polygon-split.ts) is read typed in one pass (jobs/quotes/quotes.pipeline.ts loadPolygonRows,
 * issue 22 item 3). That read must give exactly the bars, flags, day indexes and rejects of the general read, which
 * takes each value's JSON text and types it by its first character: here the same results, once compact (plain) and
 * once pretty-printed (whitespace: the general read), are ingested side by side and compared row for row; and a large
 * plain response (streamed in chunks that cut results) is read typed and gives every bar the JS parser gives.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolygonAggs } from '../../ingest/quotes/formats.ts';
import type { RunReport } from '../../jobs/processors.ts';
import { POLYGON_SNIFF_MIN_BYTES } from '../../jobs/quotes/quotes.pipeline.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { ingestQuotes, POLYGON_COUNT_EDGES, POLYGON_PLAIN_EDGES, polygonResultsPastSniffSize, writeInput } from './quotes-fixture.ts';

/** Plain results at the edges of the typing: rounding, DST, big and tiny numbers, missing or repeated members. */
const RESULTS: Array<Record<string, unknown>> = [
  ...POLYGON_PLAIN_EDGES,
  { T: 'Z', o: 10, h: 11, l: 9, c: 10, v: 5, extra: 7, t: Date.UTC(2024, 0, 10, 5) }, // another member: ignored
  ...POLYGON_COUNT_EDGES,
];

let dir: string;
let largeBytes: Buffer;
const runs = new Map<'compact' | 'pretty' | 'large', { report: RunReport; reader: SnapshotReader }>();
beforeAll(async () => {
  dir = await tempDir('proofline-polygon-plain-');
  const doc = { ticker: 'DOC', adjusted: false, results: RESULTS, status: 'OK' };
  // A repeated member, as text (JSON.stringify cannot write one): both reads take the first.
  const compact = JSON.stringify(doc).replace(
    '"results":[',
    `"results":[{"T":"R","o":10,"o":20,"h":21,"l":9,"c":10,"v":5,"t":${Date.UTC(2024, 0, 2, 5)}},`,
  );
  const pretty = compact.replace(/,"/g, ', "');
  for (const [name, text] of [
    ['compact', compact],
    ['pretty', pretty],
  ] as const) {
    const input = path.join(dir, `in-${name}`);
    await writeInput(input, 'polygon/aggs.json', text);
    const config = testConfig(path.join(dir, `data-${name}`));
    const report = await ingestQuotes(config, input);
    if (report.failed_children) throw new Error(JSON.stringify(report.children));
    runs.set(name, { report, reader: await SnapshotReader.open(config.dataDir, 'quotes', { poolSize: 1 }) });
  }
  // A large response (streamed in 1 MB chunks, so results are cut by chunk ends): the edges and plain filler bars.
  const results = polygonResultsPastSniffSize(RESULTS);
  const input = path.join(dir, 'in-large');
  await writeInput(input, 'polygon/large.json', JSON.stringify({ ticker: 'DOC', adjusted: false, results, status: 'OK' }));
  largeBytes = await readFile(path.join(input, 'quotes/polygon/large.json'));
  expect(largeBytes.byteLength).toBeGreaterThanOrEqual(POLYGON_SNIFF_MIN_BYTES);
  const config = testConfig(path.join(dir, 'data-large'));
  const report = await ingestQuotes(config, input);
  if (report.failed_children) throw new Error(JSON.stringify(report.children));
  runs.set('large', { report, reader: await SnapshotReader.open(config.dataDir, 'quotes', { poolSize: 1 }) });
}, 300_000);
afterAll(async () => {
  for (const r of runs.values()) await r.reader.close();
  await removeDir(dir);
});

describe('a plain Polygon response read typed in one pass', () => {
  it('is read typed only when every result is plain', () => {
    expect(runs.get('compact')!.report.children.map((c) => c.detail)).toEqual([expect.objectContaining({ plain: true })]);
    expect(runs.get('pretty')!.report.children.map((c) => c.detail)).toEqual([expect.objectContaining({ plain: false })]);
    expect(runs.get('large')!.report.children.map((c) => c.detail)).toEqual([expect.objectContaining({ plain: true })]);
  });

  it('gives a large plain response every bar the JS parser gives, field for field', async () => {
    const rows = await runs.get('large')!.reader.query(
      `SELECT ticker, CAST(quote_date AS VARCHAR) AS quote_date, adjustment, open::DOUBLE AS open, high::DOUBLE AS high, low::DOUBLE AS low,
              close::DOUBLE AS close, volume::DOUBLE AS volume, vwap::DOUBLE AS vwap, trade_count::DOUBLE AS trade_count
         FROM quote_bars ORDER BY ticker, quote_date`,
    );
    const want = parsePolygonAggs(largeBytes, 'large.json')
      .bars.map((b) => ({ ...b }))
      .sort((a, b) => (a.ticker === b.ticker ? a.quote_date.localeCompare(b.quote_date) : a.ticker < b.ticker ? -1 : 1));
    expect(rows.length).toBe(want.length);
    expect(rows).toEqual(want);
  });

  it('gives the bars, flags, day indexes and rejects of the general read', async () => {
    const bars = (name: 'compact' | 'pretty') =>
      runs.get(name)!.reader.query(
        `SELECT ticker, CAST(quote_date AS VARCHAR) AS quote_date, adjustment, CAST(open AS VARCHAR) AS open, CAST(high AS VARCHAR) AS high,
              CAST(low AS VARCHAR) AS low, CAST(close AS VARCHAR) AS close, volume, CAST(vwap AS VARCHAR) AS vwap, trade_count, flags, day_index
           FROM quote_bars ORDER BY ticker, quote_date`,
      );
    const compact = await bars('compact');
    expect(compact.map((r) => `${r.ticker} ${r.quote_date}`)).toEqual([
      'BRK-B 2024-03-10',
      'DOC 2024-11-03',
      'R 2024-01-02',
      'V 2024-01-17',
      'V 2024-01-18',
      'X 2024-04-10',
      'X 2024-11-03',
      'Z 2024-01-05',
      'Z 2024-01-08',
      'Z 2024-01-09',
      'Z 2024-01-10',
    ]);
    expect(compact.find((r) => r.ticker === 'R')).toMatchObject({ open: '10.000000', high: '21.000000' });
    expect(compact.find((r) => r.quote_date === '2024-01-09')).toMatchObject({ flags: ['vwap_outside_range'] });
    // Counts at BIGINT's edges: out of its range a volume is a reject (12, 13 below), a trade count NULL.
    expect(compact.filter((r) => r.ticker === 'V').map((r) => [r.volume, r.trade_count])).toEqual([
      ['9223372036854774784', null],
      ['-9223372036854775808', null],
    ]);
    expect(compact).toEqual(await bars('pretty'));
    const rejects = (name: 'compact' | 'pretty') =>
      runs.get(name)!.reader.query(`SELECT line::INTEGER AS line, reason FROM rejects WHERE file LIKE '%aggs.json' ORDER BY line`);
    expect((await rejects('compact')).map((r) => r.line)).toEqual([5, 6, 7, 12, 13]);
    expect(await rejects('compact')).toEqual(await rejects('pretty'));
  });
});
