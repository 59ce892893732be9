/**
 * Quotes ingest benchmark: 10 years of daily bars (2,520 trading days) for
 * 8,000 tickers (about 20M rows) in the Alpaca SDK CSV format, generated
 * deterministically by DuckDB into data/bench/quotes/ (reused when present),
 * then ingested by the real quotes pipeline in process: parse children that fold
 * each file's chains (jobs/quotes/quotes-fold.ts), then publish (fast path:
 * concatenate the parts, leaf-key slices, export by linking the parts).
 *
 * Target: under 2 minutes and peak RSS under 2 GB. Options (env):
 * BENCH_QUOTES_TICKERS (8000), BENCH_QUOTES_DAYS (2520), BENCH_QUOTES_FILES (40),
 * BENCH_QUOTES_CONCURRENCY (3: parse children at a time, as WORKER_CONCURRENCY=3), BENCH_LOG_LEVEL (info: derive phase marks).
 * Reports wall time, the children and publish phases, publish timings, CPU seconds and the load average.
 * Result: bench/results/quotes.json.
 */
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { quoteLiteral } from '../lib/warehouse/duckdb.ts';
import { lastPublishTimings } from '../lib/warehouse/publish.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { quotesPipeline } from '../jobs/quotes/quotes.pipeline.ts';
import { trackPeakRss, writeResult } from './bench-kit.ts';

const TICKERS = Number(process.env.BENCH_QUOTES_TICKERS ?? 8000);
const DAYS = Number(process.env.BENCH_QUOTES_DAYS ?? 2520);
const FILES = Number(process.env.BENCH_QUOTES_FILES ?? 40);
const root = path.resolve('data', 'bench', 'quotes', `${TICKERS}x${DAYS}`);
const inputDir = path.join(root, 'input');
const csvDir = path.join(inputDir, 'quotes', 'generated');

/** Writes FILES CSVs of TICKERS/FILES tickers each; prices follow a deterministic hash walk. */
async function generate(): Promise<void> {
  const marker = path.join(csvDir, '.complete');
  if (
    await stat(marker).then(
      () => true,
      () => false,
    )
  )
    return;
  await rm(csvDir, { recursive: true, force: true });
  await mkdir(csvDir, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', { memory_limit: '1GB', threads: '2' });
  const conn = await db.connect();
  const per = Math.ceil(TICKERS / FILES);
  const t0 = Date.now();
  for (let f = 0; f < FILES; f++) {
    const lo = f * per;
    const hi = Math.min(TICKERS, lo + per);
    const file = path.join(csvDir, `bars-${String(f).padStart(3, '0')}.csv`);
    // Trading days: weekdays from 2016-01-04; price = base * (1 + small deterministic drift).
    await conn.run(`COPY (
      WITH days AS (
        SELECT d AS day_no, (DATE '2016-01-04' + ((d // 5) * 7 + (d % 5))::INTEGER) AS day FROM range(${DAYS}) r(d)
      ), tick AS (
        SELECT t, 'T' || lpad(t::VARCHAR, 5, '0') AS symbol, 5 + (hash(t) % 400) AS base FROM range(${lo}, ${hi}) r(t)
      ), bars AS (
        SELECT symbol, day, round(base * (1 + ((hash(t, day_no) % 2001)::BIGINT - 1000) / 20000.0 + day_no / 5000.0), 2) AS close,
               (hash(day_no, t) % 3000) / 100000.0 AS spread, 100000 + hash(t * 7, day_no) % 5000000 AS volume, 50 + hash(day_no * 3, t) % 40000 AS trades
        FROM tick, days
      )
      SELECT strftime(day, '%Y-%m-%d') || ' 05:00:00+00:00' AS timestamp, symbol,
             round(close * (1 - spread / 2), 2) AS open, round(close * (1 + spread), 2) AS high, round(close * (1 - spread), 2) AS low,
             close, volume::DOUBLE AS volume, round(close * (1 - spread / 4), 6) AS vwap, trades::DOUBLE AS trade_count
      FROM bars ORDER BY symbol, day
    ) TO ${quoteLiteral(`${file}.tmp`)} (HEADER, DELIMITER ',')`);
    await rename(`${file}.tmp`, file);
  }
  await writeFile(marker, new Date().toISOString());
  conn.closeSync();
  db.closeSync();
  console.log(`generated ${TICKERS} tickers × ${DAYS} days in ${FILES} files (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

await generate();
let bytes = 0;
for (const f of await readdir(csvDir)) if (f.endsWith('.csv')) bytes += (await stat(path.join(csvDir, f))).size;
const dataDir = path.join(root, 'data');
await rm(dataDir, { recursive: true, force: true });
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const rss = trackPeakRss();
const t0 = Date.now();
// Parse children at a time: 3 by default, the setting docs/quotes-and-transcripts.md recommends for this ingest on 2 cores
// (WORKER_CONCURRENCY=3). Each child alternates between its DuckDB statements (a libuv thread) and the JS fold (the
// one main thread), so with 2 children both are often in JS at once and a core idles: on 2026-11-24 at full scale the
// children phase took 98.7 s at 3 against 109.5-121.5 s at 2 (peak RSS 1,285 MB against ~1,000 MB).
const concurrency = Number(process.env.BENCH_QUOTES_CONCURRENCY ?? 3);
const cpu0 = process.cpuUsage();
let publishAt = 0;
let childrenPeakRssMb = 0;
const childrenRss = trackPeakRss();
const report = await runPipelineInProcess(quotesPipeline, {
  config,
  log: createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn'),
  inputDir,
  force: true,
  concurrency,
  onProgress: (e) => {
    if (e.stage === 'publish' && e.done === 0) {
      publishAt = Date.now();
      childrenPeakRssMb = childrenRss.stop();
    }
  },
});
const cpu = process.cpuUsage(cpu0);
const cpuSeconds = Number(((cpu.user + cpu.system) / 1e6).toFixed(1));
const phases = {
  parse_and_fold_s: Number(((publishAt - t0) / 1000).toFixed(1)),
  publish_s: Number(((Date.now() - publishAt) / 1000).toFixed(1)),
  children_peak_rss_mb: childrenPeakRssMb,
};
const seconds = (Date.now() - t0) / 1000;
const peakRssMb = rss.stop();
const rows = report.rows;
console.log(`publish phases (ms): ${JSON.stringify(lastPublishTimings)}`);
console.log(
  `ingested ${rows} bars with chains in ${seconds.toFixed(1)} s (${Math.round(rows / seconds)} rows/s; children ${phases.parse_and_fold_s} s, publish ${phases.publish_s} s; children peak RSS ${childrenPeakRssMb} MB; CPU ${cpuSeconds} s), peak RSS ${peakRssMb} MB, failed children ${report.failed_children}`,
);
writeResult('quotes', {
  tickers: TICKERS,
  days: DAYS,
  files: FILES,
  input_bytes: bytes,
  rows,
  seconds: Number(seconds.toFixed(1)),
  rows_per_second: Math.round(rows / seconds),
  phases,
  publish_timings_ms: lastPublishTimings,
  cpu_seconds: cpuSeconds,
  load_average: os.loadavg().map((x) => Number(x.toFixed(2))),
  peak_rss_mb: peakRssMb,
  duckdb_memory_limit: config.DUCKDB_MEMORY_LIMIT,
  target: { seconds: 120, peak_rss_mb: 2048 },
  meets_target: seconds < 120 && peakRssMb < 2048,
  concurrency,
  failed_children: report.failed_children,
  command: 'flock /tmp/proofline-bench.lock nice -n 5 npm run bench -- quotes',
});
if (report.failed_children) process.exit(1);
