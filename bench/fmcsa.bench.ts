/**
 * FMCSA at full scale (`npm run bench -- fmcsa`): census (4.4 M) + crash (3.6 M)
 * + inspection (5.0 M rows) through the real pipeline (DuckDB read_csv → typed
 * parquet parts that ARE the published files of the parquet-only tables →
 * publish with the derived risk snapshot and the packed snapshot store),
 * against DuckDB alone loading the same three files into parquet in the same
 * run; then a carrier's snapshot by random DOT over all carriers from a real
 * server on loopback at 16 connections. Targets (issue 5): ingest < 4 min,
 * peak RSS < 4 GB, within 1.5x of DuckDB alone; >= 1,000 req/s with p99 < 50 ms.
 * The result records per-file load times, publish phases and derive steps (wall time, and CPU time in derive_cpu_ms).
 * Then incremental nights (issue 18, item 6) over the same warehouse: one with
 * nothing changed (skipped by the input digest), and (FMCSA_BENCH_PAIRS) nights
 * in which the crash file changed (its last record dropped: only that file is
 * parsed, the other files' parts are linked from the previous snapshot, every
 * carrier table is derived again), each paired with a full run of the same files.
 *
 * The input is generated once under data/bench/fmcsa-full (bench/fmcsa-generate.ts).
 * Env: FMCSA_BENCH_SCALE (full), FMCSA_BENCH_SECONDS (20), FMCSA_BENCH_CONNECTIONS (16), FMCSA_BENCH_PAIRS (3),
 * FMCSA_BENCH_OUT (the result's name under bench/results/; default fmcsa, or fmcsa-<scale> below full scale).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { link, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { fmcsaPipeline, lastDeriveCpuMs, lastDeriveTimings } from '../jobs/fmcsa/fmcsa.pipeline.ts';
import { lastPublishTimings } from '../lib/warehouse/publish.ts';
import { FMCSA_CARRIERS, SAMPLE_DOT_BASE } from '../ingest/fmcsa/fmcsa.sample.ts';
import type { SampleScale } from '../ingest/sample/sample-kit.ts';
import { trackPeakRss, writeResult } from './bench-kit.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const scale = (process.env.FMCSA_BENCH_SCALE ?? 'full') as SampleScale;
const seconds = Number(process.env.FMCSA_BENCH_SECONDS ?? 20);
const connections = Number(process.env.FMCSA_BENCH_CONNECTIONS ?? 16);
const genDir = path.join(root, 'data', 'bench', `fmcsa-${scale}`);
const inputDir = path.join(root, 'data', 'bench', `fmcsa-${scale}-core`);
const dataDir = path.join(root, 'data', 'bench', `fmcsa-${scale}-warehouse`);
const CORE = ['fmcsa/census/Company_Census_File.csv', 'fmcsa/crash/Crash_File.csv', 'fmcsa/inspection/Vehicle_Inspection_File.csv'];

/**
 * Reads every input once before anything is timed, so neither the pipeline
 * (which runs first) nor DuckDB alone (second) pays for a cold page cache:
 * a cold 1.5 GB census read from disk otherwise lands on whichever runs first.
 */
async function warmInputs(): Promise<void> {
  for (const f of CORE) for await (const _ of createReadStream(path.join(inputDir, f), { highWaterMark: 8 << 20 })) void _;
}

async function prepareInputs(): Promise<void> {
  // The three core files are enough for this bench (the full sample's other files are optional here).
  if (!CORE.every((f) => existsSync(path.join(genDir, f)))) {
    console.log(`generating the ${scale} FMCSA sample under ${genDir} (once)`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bench', 'fmcsa-generate.ts'), scale], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('sample generation failed');
  }
  await rm(inputDir, { recursive: true, force: true });
  for (const f of CORE) {
    await mkdir(path.dirname(path.join(inputDir, f)), { recursive: true });
    await link(path.join(genDir, f), path.join(inputDir, f));
  }
}

/** DuckDB alone: the same three files, read_csv (auto-detect) → zstd parquet, same memory limit and threads. */
async function duckdbAlone(config: ReturnType<typeof loadConfig>): Promise<number> {
  const out = path.join(root, 'data', 'bench', 'fmcsa-duckdb-alone');
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', {
    memory_limit: config.DUCKDB_MEMORY_LIMIT,
    threads: String(config.DUCKDB_THREADS),
    temp_directory: path.join(out, 'tmp'),
  });
  const conn = await db.connect();
  await conn.run('SET preserve_insertion_order = false');
  const t = performance.now();
  for (const f of CORE) {
    await conn.run(
      `COPY (SELECT * FROM read_csv('${path.join(inputDir, f)}', header = true)) TO '${path.join(out, path.basename(f, '.csv'))}.parquet' (FORMAT parquet, COMPRESSION zstd)`,
    );
  }
  const ms = performance.now() - t;
  conn.closeSync();
  db.closeSync();
  await rm(out, { recursive: true, force: true });
  return ms;
}

/** Replaces `file` (a hard link of the generated file, which stays as it was) by a copy without its last record. */
async function dropLastRecord(file: string): Promise<void> {
  const { size } = await stat(file);
  const fh = await open(file, 'r');
  let end = size;
  try {
    const tail = Buffer.alloc(Math.min(size, 1 << 16));
    await fh.read(tail, 0, tail.length, size - tail.length);
    // The newline ending the second-to-last line (a trailing newline ends the last one).
    const text = tail.subarray(0, tail.length - (tail.at(-1) === 10 ? 1 : 0));
    end = size - tail.length + text.lastIndexOf(10) + 1;
  } finally {
    await fh.close();
  }
  const tmp = `${file}.tmp`;
  await pipeline(createReadStream(file, { start: 0, end: end - 1 }), createWriteStream(tmp));
  await rename(tmp, file);
}

/**
 * Incremental nights over the warehouse of the full run: nothing changed (skipped by the input digest), then
 * FMCSA_BENCH_PAIRS (3) times a night in which the crash file changed, paired with a full run of the same files
 * in a scratch warehouse (`full`: every file parsed), the two back to back under the same machine load and in
 * alternating order (incremental first in even pairs), so neither kind always runs second.
 */
async function incrementalNights(config: ReturnType<typeof loadConfig>): Promise<Record<string, unknown>> {
  const scratch = `${dataDir}-full-runs`;
  const night = async (full: boolean) => {
    if (full) await rm(scratch, { recursive: true, force: true });
    const cfg = full ? loadConfig({ ...process.env, DATA_DIR: scratch, LOG_LEVEL: 'warn' }) : config;
    const rss = trackPeakRss(50);
    const t = performance.now();
    const report = await runPipelineInProcess(fmcsaPipeline, { config: cfg, log: createLogger('warn'), inputDir, force: full, full });
    const ms = performance.now() - t;
    if (report.failed_children || report.skipped) throw new Error(`night failed or skipped: ${JSON.stringify(report.incremental)}`);
    return {
      files_parsed: report.incremental?.parsed ?? null,
      files_reused: report.incremental?.reused ?? null,
      rows_parsed: report.rows,
      seconds: Math.round(ms / 100) / 10,
      peak_rss_mb: rss.stop(),
      publish_ms: { ...lastPublishTimings },
      derive_ms: { ...lastDeriveTimings },
      derive_cpu_ms: { ...lastDeriveCpuMs },
    };
  };
  const t = performance.now();
  const same = await runPipelineInProcess(fmcsaPipeline, { config, log: createLogger('warn'), inputDir });
  const sameMs = performance.now() - t;
  const pairs: Array<{ one_file_changed: Awaited<ReturnType<typeof night>>; full_run: Awaited<ReturnType<typeof night>> }> = [];
  for (let i = 0; i < Number(process.env.FMCSA_BENCH_PAIRS ?? 3); i++) {
    await dropLastRecord(path.join(inputDir, CORE[1]!));
    await warmInputs();
    if (i % 2 === 0) {
      const inc = await night(false);
      pairs.push({ one_file_changed: inc, full_run: await night(true) });
    } else {
      const full = await night(true);
      pairs.push({ one_file_changed: await night(false), full_run: full });
    }
  }
  await rm(scratch, { recursive: true, force: true });
  const ratios = pairs.map((p) => Math.round((p.one_file_changed.seconds / p.full_run.seconds) * 100) / 100);
  const sum = (k: 'one_file_changed' | 'full_run', f: (n: Awaited<ReturnType<typeof night>>) => number) =>
    pairs.reduce((a, p) => a + f(p[k]), 0);
  const withoutDerive = (n: Awaited<ReturnType<typeof night>>) => n.seconds * 1000 - Number(n.derive_ms.total ?? 0);
  return {
    changed_file: CORE[1],
    nothing_changed: { skipped: same.skipped, seconds: Math.round(sameMs / 100) / 10 },
    pairs,
    ratio_one_file_changed_to_full: ratios,
    ratio_of_sums: Math.round((sum('one_file_changed', (n) => n.seconds) / sum('full_run', (n) => n.seconds)) * 100) / 100,
    ratio_of_sums_without_derive: Math.round((sum('one_file_changed', withoutDerive) / sum('full_run', withoutDerive)) * 100) / 100,
  };
}

function pct(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10;
}

/** Bounded load loop: `connections` keep-alive clients asking random DOTs for `seconds`. */
async function loadTest(base: string, carriers: number): Promise<Record<string, unknown>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const lat: number[] = [];
  const statuses: Record<number, number> = {};
  const end = Date.now() + seconds * 1000;
  let seed = 12345;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const one = (dot: number) =>
    new Promise<number>((resolve, reject) => {
      const req = http.get(`${base}/api/carrier/${dot}/snapshot`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const dot = SAMPLE_DOT_BASE + Math.floor(rnd() * carriers);
        const t = performance.now();
        const s = await one(dot);
        lat.push(performance.now() - t);
        statuses[s] = (statuses[s] ?? 0) + 1;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return {
    requests: lat.length,
    seconds: Math.round(elapsed * 10) / 10,
    req_per_s: Math.round(lat.length / elapsed),
    p50_ms: pct(lat, 50),
    p90_ms: pct(lat, 90),
    p99_ms: pct(lat, 99),
    max_ms: pct(lat, 100),
    connections,
    statuses,
  };
}

async function serve(): Promise<Record<string, unknown>> {
  // The real service in its own process (so the load loop does not share its event loop).
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'service', 'main.ts')], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_FREE_PER_HOUR: '1000000000',
      // The carrier-lookup abuse guard (20,000 an hour) answered every request of a run 429 (as in endpoints.bench.ts).
      LOOKUP_GUARD_PER_HOUR: '1000000000',
      SNAPSHOT_POLL_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  try {
    const warm = await loadTest(url, FMCSA_CARRIERS[scale]).catch((e) => ({ error: String(e) }));
    void warm;
    const r = await loadTest(url, FMCSA_CARRIERS[scale]);
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return {
      ...r,
      server_peak_rss_mb: hwm ? Math.round(Number(hwm[1]) / 1024) : null,
      load_average: os.loadavg().map((x) => Math.round(x * 10) / 10),
    };
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  await prepareInputs();
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  await rm(dataDir, { recursive: true, force: true });
  await warmInputs();

  const loadAtStart = os.loadavg().map((x) => Math.round(x * 10) / 10);
  const rss = trackPeakRss(50);
  const t0 = performance.now();
  const report = await runPipelineInProcess(fmcsaPipeline, { config, log: createLogger('warn'), inputDir, force: true });
  const ingestMs = performance.now() - t0;
  const peakRss = rss.stop();
  const publishMs = { ...lastPublishTimings };
  const deriveMs = { ...lastDeriveTimings };
  const deriveCpuMs = { ...lastDeriveCpuMs };
  if (report.failed_children) throw new Error(`ingest failed: ${JSON.stringify(report.children.filter((c) => c.status !== 'completed'))}`);

  const aloneMs = await duckdbAlone(config);
  const serving = await serve();
  const incremental = await incrementalNights(config);
  const rows = report.children.reduce((a, c) => a + c.rows, 0);
  const result = {
    scale,
    command: 'flock /tmp/proofline-bench.lock nice -n 5 npm run bench -- fmcsa',
    ingest: {
      files: report.children.map((c) => ({
        key: c.key,
        rows: c.rows,
        rejects: c.rejects,
        ms: Object.values(c.detail ?? {}).reduce((a: number, d) => a + Number((d as { ms?: number }).ms ?? 0), 0),
      })),
      rows,
      total_seconds: Math.round(ingestMs / 100) / 10,
      rows_per_s: Math.round(rows / (ingestMs / 1000)),
      peak_rss_mb: peakRss,
      publish_ms: publishMs,
      derive_ms: deriveMs,
      derive_cpu_ms: deriveCpuMs,
      load_average_at_start: loadAtStart,
      load_average_at_end: os.loadavg().map((x) => Math.round(x * 10) / 10),
      duckdb_alone_seconds: Math.round(aloneMs / 100) / 10,
      ratio_to_duckdb_alone: Math.round((ingestMs / aloneMs) * 100) / 100,
      targets: { total_seconds: 240, peak_rss_mb: 4000, ratio_to_duckdb_alone: 1.25 }, // issue 22 item 4
    },
    incremental,
    serving: {
      route: '/api/carrier/{dot}/snapshot',
      random_dots_over: FMCSA_CARRIERS[scale],
      ...serving,
      targets: { req_per_s: 1000, p99_ms: 50 },
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeResult(process.env.FMCSA_BENCH_OUT || (scale === 'full' ? 'fmcsa' : `fmcsa-${scale}`), result);
}

await main();
