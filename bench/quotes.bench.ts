/**
 * Quotes ingest benchmark (issue 22, item 3): the same daily bars, 10 years (2,520 trading days) for 8,000 tickers
 * (about 20M rows), in every supported format, ingested side by side in one run by the real quotes pipeline in
 * process (parse children that fold each file's chains, jobs/quotes/quotes-fold.ts, then publish):
 *
 *   alpaca-sdk     `timestamp,symbol,open,...,trade_count` CSV (raw)
 *   alpaca-daily   `Date,symbol,Open,...,Trades,VWAP` CSV (the adjusted layout, columns in its own order)
 *   polygon        aggregates responses `{adjusted, results: [{T, o, h, l, c, v, vw, n, t}]}` (JSON)
 *
 * Each format gets the same FILES files of TICKERS/FILES tickers each, generated deterministically by DuckDB into
 * data/bench/quotes/ (reused when present), and runs in its own child process (so peak RSS is per format) with the
 * same concurrency. Only ratios within one run count (this machine's speed drifts): the result gives each format's
 * time and its ratio to the fastest (target ≤ 1.3×), and the full-scale target for all: under 60 s, peak RSS < 2 GB.
 *
 * Options (env): BENCH_QUOTES_TICKERS (8000), BENCH_QUOTES_DAYS (2520), BENCH_QUOTES_FILES (40),
 * BENCH_QUOTES_FORMATS (alpaca-sdk,alpaca-daily,polygon), BENCH_QUOTES_CONCURRENCY (3: parse children at a time, as
 * WORKER_CONCURRENCY=3), BENCH_LOG_LEVEL (warn), BENCH_QUOTES_INPUT_ROOT (read the inputs from another checkout's
 * data/bench/quotes, never written), BENCH_QUOTES_OUT (result name, default quotes), BENCH_QUOTES_TIMELINE (a 5-second timeline of the JS thread's
 * busy share and the cores used, per format). Result: bench/results/quotes.json.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
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
const FORMATS = ['alpaca-sdk', 'alpaca-daily', 'polygon'] as const;
type Format = (typeof FORMATS)[number];
const selected = (process.env.BENCH_QUOTES_FORMATS ?? FORMATS.join(','))
  .split(',')
  .map((f) => f.trim())
  .filter((f): f is Format => (FORMATS as readonly string[]).includes(f));
// Parse children at a time: 3 by default, the setting docs/quotes-and-transcripts.md recommends for this ingest on 2 cores
// (WORKER_CONCURRENCY=3). Each child alternates between its DuckDB statements (a libuv thread) and the JS fold (the
// one main thread), so with 2 children both are often in JS at once and a core idles: on 2026-11-24 at full scale the
// children phase took 98.7 s at 3 against 109.5-121.5 s at 2 (peak RSS 1,285 MB against ~1,000 MB).
const concurrency = Number(process.env.BENCH_QUOTES_CONCURRENCY ?? 3);
const root = path.resolve('data', 'bench', 'quotes', `${TICKERS}x${DAYS}x${FILES}`);
// BENCH_QUOTES_INPUT_ROOT: read the generated inputs from another checkout's data/bench/quotes (5.8 GB at full scale,
// only read: a missing or incomplete set is an error, never generated there); the warehouses stay under this checkout.
const inputRoot = process.env.BENCH_QUOTES_INPUT_ROOT
  ? path.join(path.resolve(process.env.BENCH_QUOTES_INPUT_ROOT), `${TICKERS}x${DAYS}x${FILES}`)
  : root;
const inputOf = (f: Format) => path.join(inputRoot, `input-${f}`);
const filesOf = (f: Format) => path.join(inputOf(f), 'quotes', 'generated');

/** The bars of tickers [lo, hi): weekdays from 2016-01-04; price = base * (1 + small deterministic drift). */
const barsSql = (lo: number, hi: number) => `
  WITH days AS (
    SELECT d AS day_no, (DATE '2016-01-04' + ((d // 5) * 7 + (d % 5))::INTEGER) AS day FROM range(${DAYS}) r(d)
  ), tick AS (
    SELECT t, 'T' || lpad(t::VARCHAR, 5, '0') AS symbol, 5 + (hash(t) % 400) AS base FROM range(${lo}, ${hi}) r(t)
  ), bars AS (
    SELECT symbol, day, round(base * (1 + ((hash(t, day_no) % 2001)::BIGINT - 1000) / 20000.0 + day_no / 5000.0), 2) AS close,
           (hash(day_no, t) % 3000) / 100000.0 AS spread, 100000 + hash(t * 7, day_no) % 5000000 AS volume, 50 + hash(day_no * 3, t) % 40000 AS trades
    FROM tick, days
  )
  SELECT day, symbol, round(close * (1 - spread / 2), 2) AS open, round(close * (1 + spread), 2) AS high, round(close * (1 - spread), 2) AS low,
         close, volume::DOUBLE AS volume, round(close * (1 - spread / 4), 6) AS vwap, trades::DOUBLE AS trade_count
  FROM bars ORDER BY symbol, day`;

/** One file of `format` with the bars of tickers [lo, hi). */
async function writeFormatFile(conn: Awaited<ReturnType<DuckDBInstance['connect']>>, format: Format, lo: number, hi: number, file: string) {
  const ts = `strftime(day, '%Y-%m-%d') || ' 05:00:00+00:00'`;
  if (format === 'alpaca-sdk')
    await conn.run(`COPY (SELECT ${ts} AS timestamp, symbol, open, high, low, close, volume, vwap, trade_count FROM (${barsSql(lo, hi)}))
      TO ${quoteLiteral(file)} (HEADER, DELIMITER ',')`);
  else if (format === 'alpaca-daily')
    await conn.run(`COPY (SELECT ${ts} AS "Date", symbol, open AS "Open", high AS "High", low AS "Low", close AS "Close", volume AS "Volume",
        trade_count AS "Trades", vwap AS "VWAP" FROM (${barsSql(lo, hi)})) TO ${quoteLiteral(file)} (HEADER, DELIMITER ',')`);
  else {
    // Polygon's aggregates shape: one JSON document; each result names its ticker in `T` and its day in `t`, epoch
    // milliseconds of midnight New York. DuckDB writes the results as JSON lines (`T` as `T_`: its struct names ignore case), wrapped here into the document.
    const lines = `${file}.ndjson`;
    await conn.run(`COPY (SELECT symbol AS "T_", volume AS v, vwap AS vw, open AS o, close AS c, high AS h, low AS l,
        epoch_ms(timezone('America/New_York', CAST(day AS TIMESTAMP))) AS t, trade_count::BIGINT AS n FROM (${barsSql(lo, hi)}))
      TO ${quoteLiteral(lines)} (FORMAT JSON)`);
    const out = createWriteStream(file, { highWaterMark: 1 << 20 });
    out.write('{"adjusted":false,"queryCount":0,"resultsCount":0,"status":"OK","results":[');
    let first = true;
    for await (const line of createInterface({ input: createReadStream(lines), crlfDelay: Number.POSITIVE_INFINITY })) {
      if (!line) continue;
      const result = line.replace('"T_":', '"T":');
      if (!out.write(first ? result : `,${result}`)) await once(out, 'drain');
      first = false;
    }
    out.end(']}\n');
    await once(out, 'close');
    await rm(lines);
  }
}

/** Writes FILES files of TICKERS/FILES tickers each in `format` (reused when complete). */
async function generate(format: Format): Promise<void> {
  const dir = filesOf(format);
  const marker = path.join(dir, '.complete');
  if (
    await stat(marker).then(
      () => true,
      () => false,
    )
  )
    return;
  if (inputRoot !== root) throw new Error(`no complete ${format} inputs under ${inputRoot} (BENCH_QUOTES_INPUT_ROOT is only read)`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', { memory_limit: '1GB', threads: '2' });
  const conn = await db.connect();
  const per = Math.ceil(TICKERS / FILES);
  const ext = format === 'polygon' ? 'json' : 'csv';
  const t0 = Date.now();
  for (let f = 0; f < FILES; f++) {
    const file = path.join(dir, `bars-${String(f).padStart(3, '0')}.${ext}`);
    await writeFormatFile(conn, format, f * per, Math.min(TICKERS, (f + 1) * per), `${file}.tmp`);
    await rename(`${file}.tmp`, file);
  }
  await writeFile(marker, new Date().toISOString());
  conn.closeSync();
  db.closeSync();
  console.log(`generated ${format}: ${TICKERS} tickers × ${DAYS} days in ${FILES} files (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** Ingests one format in this process and prints its measurement as the last line (JSON). */
async function measure(format: Format): Promise<void> {
  const dir = filesOf(format);
  let bytes = 0;
  for (const f of await readdir(dir)) if (!f.startsWith('.')) bytes += (await stat(path.join(dir, f))).size;
  const dataDir = path.join(root, `data-${format}`);
  await rm(dataDir, { recursive: true, force: true });
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  // The inputs are read once before the clock starts (as the endpoints bench reads its files before its cold runs), so
  // every format starts from the page cache: on 2026-11-26 12:52 the Alpaca daily run spent its first ~40 s at
  // 0.03-0.1 cores (its 1.7 GB last read 27 minutes before, other sessions' full-scale runs in between: most likely the
  // disk), which no format's code causes. How long that read took is reported (`input_read_s`).
  const r0 = Date.now();
  const chunk = Buffer.allocUnsafe(8 << 20);
  for (const f of await readdir(dir)) {
    if (f.startsWith('.')) continue;
    const fh = await open(path.join(dir, f), 'r');
    try {
      while ((await fh.read(chunk, 0, chunk.length, null)).bytesRead > 0);
    } finally {
      await fh.close();
    }
  }
  const inputReadS = Number(((Date.now() - r0) / 1000).toFixed(1));
  const rss = trackPeakRss();
  const load0 = os.loadavg().map((x) => Number(x.toFixed(2)));
  // BENCH_QUOTES_TIMELINE=1: every 5 s, the share of the JS thread that was busy and the cores the process used (all
  // threads), to tell a saturated JS thread (busy ≈ 1) from waiting (both low).
  const timeline: Array<{ s: number; js_busy: number; cores: number }> = [];
  let lastElu = performance.eventLoopUtilization();
  let lastCpu = process.cpuUsage();
  const sampler = process.env.BENCH_QUOTES_TIMELINE
    ? setInterval(() => {
        const elu = performance.eventLoopUtilization();
        const cpu = process.cpuUsage();
        timeline.push({
          s: Math.round((Date.now() - t0) / 1000),
          js_busy: Number(performance.eventLoopUtilization(elu, lastElu).utilization.toFixed(2)),
          cores: Number(((cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 5e6).toFixed(2)),
        });
        lastElu = elu;
        lastCpu = cpu;
      }, 5000)
    : null;
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  let publishAt = 0;
  let childrenPeakRssMb = 0;
  const childrenRss = trackPeakRss();
  const report = await runPipelineInProcess(quotesPipeline, {
    config,
    log: createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn'),
    inputDir: inputOf(format),
    force: true,
    concurrency,
    onProgress: (e) => {
      if (e.stage === 'publish' && e.done === 0) {
        publishAt = Date.now();
        childrenPeakRssMb = childrenRss.stop();
      }
    },
  });
  if (sampler) clearInterval(sampler);
  const cpu = process.cpuUsage(cpu0);
  const seconds = (Date.now() - t0) / 1000;
  const peakRssMb = rss.stop();
  await rm(dataDir, { recursive: true, force: true });
  const result = {
    format,
    input_bytes: bytes,
    input_read_s: inputReadS,
    rows: report.rows,
    seconds: Number(seconds.toFixed(1)),
    rows_per_second: Math.round(report.rows / seconds),
    phases: {
      parse_and_fold_s: Number(((publishAt - t0) / 1000).toFixed(1)),
      publish_s: Number(((Date.now() - publishAt) / 1000).toFixed(1)),
      children_peak_rss_mb: childrenPeakRssMb,
    },
    publish_timings_ms: lastPublishTimings,
    // CPU of this whole process: the JS thread and every DuckDB thread (the parse children are async jobs of this
    // process, not processes of their own). Unlike wall time, it hardly moves with the machine's load.
    cpu_seconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(1)),
    cores_used: Number(((cpu.user + cpu.system) / 1e6 / seconds).toFixed(2)),
    load_average_before: load0,
    load_average_after: os.loadavg().map((x) => Number(x.toFixed(2))),
    peak_rss_mb: peakRssMb,
    failed_children: report.failed_children,
    ...(sampler ? { timeline } : {}),
  };
  console.log(JSON.stringify(result));
}

const only = process.env.BENCH_QUOTES_ONLY as Format | undefined;
if (only) {
  await measure(only);
  process.exit(0);
}
for (const f of selected) await generate(f);
const results: Array<Record<string, unknown> & { format: Format; seconds: number; peak_rss_mb: number; failed_children: number }> = [];
for (const f of selected) {
  console.log(`ingesting ${f} ...`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_QUOTES_ONLY: f },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  if (r.status !== 0 || !last.startsWith('{')) {
    console.error(r.stdout);
    throw new Error(`the ${f} run failed (exit ${r.status})`);
  }
  const m = JSON.parse(last);
  console.log(
    `${f}: ${m.rows} bars in ${m.seconds} s (${m.rows_per_second} rows/s; children ${m.phases.parse_and_fold_s} s, publish ${m.phases.publish_s} s), ${m.cpu_seconds} CPU s (${m.cores_used} cores), peak RSS ${m.peak_rss_mb} MB, load ${m.load_average_before[0]} → ${m.load_average_after[0]}`,
  );
  results.push(m);
}
const fastest = Math.min(...results.map((r) => r.seconds));
for (const r of results) r.ratio_to_fastest = Number((r.seconds / fastest).toFixed(2));
// The formats run one after another, so a change in the machine's load between them moves the wall-time ratio; the
// ratio of CPU seconds shows the work itself (the same cores, whatever else runs).
const leastCpu = Math.min(...results.map((r) => Number(r.cpu_seconds)));
for (const r of results) r.cpu_ratio_to_least = Number((Number(r.cpu_seconds) / leastCpu).toFixed(2));
const worst = Math.max(...results.map((r) => Number(r.ratio_to_fastest)));
const full = TICKERS >= 8000 && DAYS >= 2520;
writeResult(process.env.BENCH_QUOTES_OUT ?? 'quotes', {
  tickers: TICKERS,
  days: DAYS,
  files: FILES,
  concurrency,
  formats: results,
  worst_ratio_to_fastest: worst,
  worst_cpu_ratio_to_least: Math.max(...results.map((r) => Number(r.cpu_ratio_to_least))),
  load_average: os.loadavg().map((x) => Number(x.toFixed(2))),
  duckdb_memory_limit: loadConfig({ ...process.env }).DUCKDB_MEMORY_LIMIT,
  target: { ratio_to_fastest: 1.3, seconds_at_full_scale: 60, peak_rss_mb: 2048 },
  meets_ratio_target: worst <= 1.3,
  meets_time_target: full ? results.every((r) => r.seconds < 60 && r.peak_rss_mb < 2048) : null,
  command: 'flock /tmp/proofline-bench.lock nice -n 5 npm run bench -- quotes',
});
if (results.some((r) => r.failed_children)) process.exit(1);
