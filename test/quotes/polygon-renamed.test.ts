/**
 * A Polygon response whose results are all renamable (plain, `T` first: ingest/quotes/polygon-split.ts) has its
 * results' `T` written as `_` and is read by `read_json` with typed columns, one JSON parse per result instead of two
 * (jobs/quotes/quotes.pipeline.ts loadPolygonRows, issue 22 item 3). It must store exactly what the `json_transform`
 * read stores (itself pinned against the general read and the JS parser by polygon-plain and polygon-sql): here the same
 * inputs are ingested with renaming and without (`polygonReadOptions.renameTicker`) and every stored part and table
 * file is compared byte for byte, with the rejects. The inputs also take the other ways: a result naming a member twice
 * (read_json refuses it: the json_transform read of the renamed lines), a result that is not renamable after many that
 * were (the file split again without renaming), a member named `_` (never renamed), a small response and one without
 * results.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolygonAggs } from '../../ingest/quotes/formats.ts';
import { polygonReadOptions } from '../../jobs/quotes/quotes.pipeline.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import {
  type IngestRun,
  ingestEachMode,
  POLYGON_COUNT_EDGES,
  POLYGON_PLAIN_EDGES,
  polygonResultsPastSniffSize,
  storedFiles,
  writeInput,
} from './quotes-fixture.ts';

/** Renamable results at the edges of the typing (JSON.stringify writes `T` first). */
const EDGES: Array<Record<string, unknown>> = [
  ...POLYGON_PLAIN_EDGES,
  { T: 'Z', o: 10, h: 11, l: 9, c: 10, v: 5, extra: 7, TT: 1, t: Date.UTC(2024, 0, 10, 5) }, // other members: ignored
  {
    T: 'W',
    o: 0.0000005,
    h: Number('4503599627.3704995'), // the double nearest that text
    l: 0.0000005,
    c: 2.5e-7,
    v: 1.5,
    vw: 99999.9999995,
    n: Number('1234567890123456789'),
    t: Date.UTC(2024, 0, 11, 5),
  },
  {
    T: 'W',
    o: 1e-7,
    h: Number('1.0000004999999999'),
    l: 1e-7,
    c: 1e-7,
    v: Number('0.49999999999999994'),
    vw: 1e-7,
    n: 7.5,
    t: Date.UTC(2024, 0, 12, 5),
  },
  ...POLYGON_COUNT_EDGES,
];

/** A large response of `first` and filler bars, as compact JSON. */
const large = (first: Array<Record<string, unknown>>, ticker = 'DOC') =>
  JSON.stringify({ ticker, adjusted: false, results: polygonResultsPastSniffSize(first), status: 'OK' });

const MODES = ['renamed', 'transform'] as const;
type Mode = (typeof MODES)[number];
let dir: string;
let runs: Map<Mode, IngestRun>;
let renamedBytes: Buffer;

beforeAll(async () => {
  dir = await tempDir('proofline-polygon-renamed-');
  const input = path.join(dir, 'input');
  await writeInput(input, 'polygon/renamed.json', large(EDGES));
  // A repeated member, as text (JSON.stringify cannot write one): every read takes the first.
  await writeInput(
    input,
    'polygon/repeated.json',
    large(EDGES).replace('"results":[', `"results":[{"T":"R","o":10,"o":20,"h":21,"l":9,"c":10,"v":5,"t":${Date.UTC(2024, 0, 2, 5)}},`),
  );
  // Renamable results past the first read chunks, then one with its `T` last: the file is split again without renaming.
  const mixed = polygonResultsPastSniffSize(EDGES);
  mixed.push({ o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 0, 15, 5), T: 'LAST' });
  await writeInput(input, 'polygon/mixed.json', JSON.stringify({ ticker: 'DOC', adjusted: true, results: mixed, status: 'OK' }));
  // A member named `_` (no `T`): plain, never renamed.
  await writeInput(
    input,
    'polygon/underscore.json',
    large([{ _: 5, o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 0, 2, 5) }], 'UND'),
  );
  // A small response (parsed in JS first, then split and read the same way), and one without results.
  await writeInput(input, 'polygon/small.json', JSON.stringify({ ticker: 'DOC', adjusted: false, results: EDGES, status: 'OK' }));
  await writeInput(input, 'polygon/empty.json', JSON.stringify({ ticker: 'DOC', adjusted: false, results: [], status: 'OK' }));
  renamedBytes = await readFile(path.join(input, 'quotes/polygon/renamed.json'));
  runs = await ingestEachMode(
    dir,
    input,
    MODES,
    (mode) => {
      polygonReadOptions.renameTicker = mode === 'renamed';
    },
    () => {
      polygonReadOptions.renameTicker = true;
    },
  );
}, 300_000);
afterAll(async () => {
  await removeDir(dir);
});

/** Each child's file and how it read the results. */
const reads = (mode: Mode) =>
  Object.fromEntries(
    runs
      .get(mode)!
      .report.children.map((c) => [
        path.basename(c.key),
        { renamed: (c.detail as { renamed: boolean }).renamed, read: (c.detail as { read: string }).read },
      ]),
  );

/** Runs `fn` with a reader of the run's snapshot. */
async function withReader<T>(mode: Mode, fn: (r: SnapshotReader) => Promise<T>): Promise<T> {
  const reader = await SnapshotReader.open(runs.get(mode)!.dataDir, 'quotes', { poolSize: 1 });
  try {
    return await fn(reader);
  } finally {
    await reader.close();
  }
}

describe('a renamable Polygon response read by read_json', () => {
  it('reads renamable files by read_json, and the others as before', () => {
    expect(reads('renamed')).toEqual({
      'renamed.json': { renamed: true, read: 'read_json' },
      'repeated.json': { renamed: true, read: 'json_transform' },
      'mixed.json': { renamed: false, read: 'json_transform' },
      'underscore.json': { renamed: false, read: 'json_transform' },
      'small.json': { renamed: true, read: 'read_json' },
      'empty.json': { renamed: true, read: 'read_json' },
    });
    expect(runs.get('renamed')!.report.children.find((c) => c.key.endsWith('/empty.json'))).toMatchObject({ rows: 0, rejects: 0 });
    for (const r of Object.values(reads('transform'))) expect(r).toEqual({ renamed: false, read: 'json_transform' });
  });

  it('stores the same parts and tables, byte for byte, as the json_transform read', async () => {
    // The rejects parts hold the run's id: their rows are compared below.
    const stored = async (mode: Mode) =>
      new Map([...(await storedFiles(runs.get(mode)!.dataDir))].filter(([f]) => !f.includes('/rejects/')));
    const renamed = await stored('renamed');
    const transform = await stored('transform');
    expect([...renamed.keys()].filter((f) => f.includes('polygon_renamed.json')).length).toBeGreaterThan(3);
    expect([...renamed.keys()].sort()).toEqual([...transform.keys()].sort());
    for (const [f, bytes] of renamed) expect([f, bytes === transform.get(f)]).toEqual([f, true]);
  });

  it("rejects the same results, and gives the JS parser's bars", async () => {
    const rejects = (mode: Mode) =>
      withReader(mode, (r) => r.query(`SELECT file, line::INTEGER AS line, reason, raw FROM rejects ORDER BY file, line`));
    const renamed = await rejects('renamed');
    expect(renamed.filter((r) => String(r.file).endsWith('/renamed.json')).map((r) => r.line)).toEqual([4, 5, 6, 13, 14]);
    expect(renamed).toEqual(await rejects('transform'));
    const rows = await withReader('renamed', (r) =>
      r.query(
        `SELECT ticker, CAST(quote_date AS VARCHAR) AS quote_date, adjustment, open::DOUBLE AS open, high::DOUBLE AS high, low::DOUBLE AS low,
                close::DOUBLE AS close, volume::DOUBLE AS volume, vwap::DOUBLE AS vwap, trade_count::DOUBLE AS trade_count
           FROM quote_bars WHERE ticker IN ('BRK-B', 'DOC', 'X', 'Z', 'W', 'V') AND adjustment = 'raw' ORDER BY ticker, quote_date`,
      ),
    );
    const want = parsePolygonAggs(renamedBytes, 'renamed.json')
      .bars.filter((b) => ['BRK-B', 'DOC', 'X', 'Z', 'W', 'V'].includes(b.ticker))
      .map((b) => ({ ...b }))
      .sort((a, b) => (a.ticker === b.ticker ? a.quote_date.localeCompare(b.quote_date) : a.ticker < b.ticker ? -1 : 1));
    expect(want.length).toBe(EDGES.length - 5);
    expect(rows).toEqual(want);
  });
});
