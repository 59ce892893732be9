/**
 * Builds a temporary quotes input tree over the real fixtures (copies in a temp dir, never
 * into the repo) and runs the quotes pipeline into a temp data dir.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '../../lib/log.ts';
import type { Config } from '../../lib/config.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { POLYGON_SNIFF_MIN_BYTES, quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { fixture } from '../helpers/shared.ts';
import { testConfig } from '../helpers/env.ts';

export const QUOTE_FIXTURES = [
  'alpaca-daily/NVDA_1Day.csv',
  'alpaca-daily/AAPL_1Day.csv',
  'alpaca-sdk/AAPL.csv',
  'alpaca-sdk/MSFT.csv',
  'polygon-mocks/v2__aggs__ticker__AAPL__range__1__day__2005-04-01__2005-04-04.json',
];

export async function linkQuoteFixtures(inputDir: string, files = QUOTE_FIXTURES): Promise<void> {
  for (const f of files) {
    const target = path.join(inputDir, 'quotes', f);
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(fixture(`sec/quotes/${f}`), target);
  }
}

export async function writeInput(inputDir: string, rel: string, content: string): Promise<void> {
  const target = path.join(inputDir, 'quotes', rel);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, content);
}

export async function ingestQuotes(config: Config, inputDir: string) {
  return runPipelineInProcess(quotesPipeline, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
}

/** A run of one ingest: its report and data directory. */
export type IngestRun = { report: Awaited<ReturnType<typeof ingestQuotes>>; dataDir: string };

/** Each child's file key and how it folded (`detail.folded`, `detail.ordered`), from a run's report. */
export const foldDetails = (run: IngestRun) =>
  run.report.children.map((c) => ({ key: c.key, ...(c.detail as { folded?: boolean; ordered?: boolean }) }));

/**
 * Ingests `inputDir` once per mode into its own data directory under `dir`, each with `setMode(mode)` applied and
 * `reset()` after it (a failed child fails the setup): the same inputs, one way each, to compare their stored files.
 */
export async function ingestEachMode<M extends string>(
  dir: string,
  inputDir: string,
  modes: readonly M[],
  setMode: (mode: M) => void,
  reset: () => void,
): Promise<Map<M, IngestRun>> {
  const runs = new Map<M, IngestRun>();
  for (const mode of modes) {
    setMode(mode);
    try {
      const config = testConfig(path.join(dir, `data-${mode}`));
      const report = await ingestQuotes(config, inputDir);
      if (report.failed_children) throw new Error(JSON.stringify(report.children));
      runs.set(mode, { report, dataDir: config.dataDir });
    } finally {
      reset();
    }
  }
  return runs;
}

/**
 * Plain Polygon results at the edges of the typing, in Polygon's key order (`T` first): rounding, DST, big and tiny
 * numbers, a missing member; results 4-6 are rejects. The Polygon read tests put their own results after these.
 */
export const POLYGON_PLAIN_EDGES: ReadonlyArray<Record<string, unknown>> = [
  { T: 'brk.b', o: 1.2345675, h: 2.0000005, l: 1, c: 1.5, v: 100.5, vw: 1.23456749, n: 2.5, t: Date.UTC(2024, 2, 10, 5) }, // DST starts that day
  { o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 10, 3, 4) }, // no ticker: the document's
  { T: 'X', o: 10, h: 11, l: 9, c: 10, v: 1000, t: Date.UTC(2024, 10, 4, 4, 59, 59) }, // 23:59:59 New York: the 3rd
  { T: 'X', o: 10, h: 11, l: 9, c: 10, v: 1000, t: 1712721600000.5 }, // fractional epoch milliseconds
  { T: 'Y', o: 10, h: 11, l: 9, c: 10, v: 1000 }, // no timestamp: reject
  { T: 'Y', o: 10, h: 11, l: 9, c: 10, t: Date.UTC(2024, 0, 3, 5) }, // no volume: reject
  { T: 'bad ticker!', o: 10, h: 11, l: 9, c: 10, v: 1, t: Date.UTC(2024, 0, 4, 5) }, // not a ticker: reject
  { T: 'Z', o: 123456.7891235, h: 123456.79, l: 0.0000004, c: 0.0000005, v: 2.4999, n: 1234567890123456, t: Date.UTC(2024, 0, 5, 5) },
  { T: 'Z', o: 10, h: 11, l: 9, c: 10, v: 2e-7, vw: -0, n: 1e3, t: Date.UTC(2024, 0, 8, 5) },
  { T: 'Z', o: 10, h: 12.5, l: 9.75, c: 10, v: 1e15, vw: 13, n: 0.5, t: Date.UTC(2024, 0, 9, 5) }, // flags: vwap outside the range
];

/**
 * Counts at BIGINT's edges (the stored type), ticker `V`: out of its range a volume is a reject (the first two) and a
 * trade count NULL, not a failed file (wholeCount, ingest/quotes/formats.ts); 2^63 - 1024 and -2^63 are inside it.
 */
export const POLYGON_COUNT_EDGES: ReadonlyArray<Record<string, unknown>> = [
  { T: 'V', o: 10, h: 11, l: 9, c: 10, v: 1e30, t: Date.UTC(2024, 0, 15, 5) },
  { T: 'V', o: 10, h: 11, l: 9, c: 10, v: 2 ** 63, t: Date.UTC(2024, 0, 16, 5) },
  { T: 'V', o: 10, h: 11, l: 9, c: 10, v: 2 ** 63 - 1024, n: 1e30, t: Date.UTC(2024, 0, 17, 5) },
  { T: 'V', o: 10, h: 11, l: 9, c: 10, v: -(2 ** 63), n: 2 ** 63, t: Date.UTC(2024, 0, 18, 5) },
];

/**
 * Polygon aggregates results: `first`, then plain filler bars of many tickers until the response passes the size
 * from which a Polygon file is read by DuckDB, not parsed in JS (POLYGON_SNIFF_MIN_BYTES).
 */
export function polygonResultsPastSniffSize(first: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const results = [...first];
  const day0 = Date.UTC(2016, 0, 4, 5);
  for (let i = 0; results.length * 110 < POLYGON_SNIFF_MIN_BYTES * 1.1; i++) {
    const p = 10 + (i % 997) / 7;
    results.push({
      T: `F${Math.floor(i / 1000)}`,
      v: 1000 + i,
      vw: p + 0.0000015,
      o: p,
      c: p + 0.01,
      h: p + 0.02,
      l: p - 0.02,
      t: day0 + (i % 1000) * 86_400_000,
      n: i % 50,
    });
  }
  return results;
}

/** Stored files of a quotes ingest that do not depend on the run (its id, clock and input paths are in the others). */
export const RUN_FREE_FILES = /(input-parts\/.*\.parquet|tables\/quote_[a-z_]+(\/\d+)?\.parquet)$/;

/**
 * The files of the data directory `root` whose path matches `re`, by their path below the snapshot (base64 of their
 * bytes): two ingests of the same inputs compared file by file.
 */
export async function storedFiles(root: string, re: RegExp = RUN_FREE_FILES): Promise<Map<string, string>> {
  const files = (await readdir(root, { recursive: true })).map((f) => f.split(path.sep).join('/')).filter((f) => re.test(f));
  return new Map(
    await Promise.all(
      files.map(async (f) => [f.replace(/^.*\/snapshots\/[^/]+\//, ''), (await readFile(path.join(root, f))).toString('base64')] as const),
    ),
  );
}

/**
 * An Alpaca SDK file in key order: 12 tickers (T000–T011) of 70 weekdays each, so chains longer than the heads'
 * 31-day tails and, in batches of 150 bars, several batches.
 */
export function orderedSdkCsv(): string {
  const lines = ['timestamp,symbol,open,high,low,close,volume,vwap,trade_count'];
  for (let k = 0; k < 12; k++)
    for (let d = 0; d < 70; d++) {
      const day = new Date(Date.UTC(2024, 0, 1) + (Math.floor(d / 5) * 7 + (d % 5)) * 86_400_000).toISOString().slice(0, 10);
      const p = 10 + k + d / 100;
      lines.push(
        `${day} 05:00:00+00:00,T${String(k).padStart(3, '0')},${p},${p + 0.5},${p - 0.5},${p + 0.25},${1000 + d},${p + 0.1},${d + 1}`,
      );
    }
  return `${lines.join('\n')}\n`;
}
