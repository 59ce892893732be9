/** Shared helpers for benchmark scripts: peak-RSS sampling, result files, the API as a process, timed pipeline runs. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { link, mkdir, open, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import type { Pipeline } from '../jobs/pipeline.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { lastPublishShape, lastPublishTimings } from '../lib/warehouse/publish.ts';

export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

/** Samples this process's RSS every `ms`; `stop()` returns the peak in MB. Child processes must be measured separately. */
export function trackPeakRss(ms = 100): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const t = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), ms);
  t.unref();
  return {
    stop() {
      clearInterval(t);
      peak = Math.max(peak, process.memoryUsage().rss);
      return Math.round(peak / 1e6);
    },
  };
}

export function machineInfo() {
  return {
    node: process.version,
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model,
    total_mem_gb: Math.round(os.totalmem() / 1e9),
    platform: `${os.platform()} ${os.release()}`,
  };
}

/** Writes bench/results/<name>.json with a timestamp and machine info. */
export function writeResult(name: string, result: Record<string, unknown>): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({ bench: name, measured_at: new Date().toISOString(), machine: machineInfo(), ...result }, null, 2) + '\n',
  );
  console.log(`result → ${path.relative(process.cwd(), file)}`);
  return file;
}

/**
 * Starts the API (`service/main.ts`) as its own process on a free loopback port, with the benchmarks' base
 * environment (no Redis, no live FMCSA refresh, silent log) and `env` over it; resolves once it listens.
 */
/**
 * V8 flags of the serving process (the young generation's maximum and minimum size), read from package.json's
 * `serve` script of `root` (default this checkout; their one definition, as bench/api.bench.ts reads them): a
 * benchmark measures the garbage collector production runs. With V8's default young generation (16 MB
 * semi-spaces) the endpoints bench's server ran 42-87 scavenges and 1-2 mark-compacts (14-83 ms) per 5 s wrk run
 * of a packed-store route; with `--max-semi-space-size=128`, 7-24 scavenges and no mark-compact (docs/benchmarks-history.md,
 * "Where the warm p99 tail comes from"). A `--min-semi-space-size` there is read too (measured and not adopted:
 * docs/benchmarks-history.md, issue 22 item 5, branch hot22d).
 */
export function readServeNodeFlags(root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return pkg.scripts.serve!.split(/\s+/).filter((a) => /^--(max|min)-semi-space-size=/.test(a));
}

export async function startServiceProcess(env: Record<string, string>): Promise<{ proc: ChildProcess; url: string }> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const proc = spawn(process.execPath, [...readServeNodeFlags(), '--import', 'tsx', path.join(root, 'service/main.ts')], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', FMCSA_WEBKEY: '', REDIS_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += String(d);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  return { proc, url };
}

/** The p-th percentile of ascending `sorted` latencies, to 0.01 ms. */
export function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 100) / 100;
}

/**
 * Runs `n` requests with `c` in flight; returns elapsed ms, ascending latencies and acknowledged results. A request
 * that resolves null or throws counts as failed; a thrown error goes to `onError` when given.
 */
export async function runLoad<T>(
  n: number,
  c: number,
  one: (i: number) => Promise<T | null>,
  onError?: (e: unknown) => void,
): Promise<{ ms: number; lat: number[]; ok: T[]; failed: number }> {
  const lat: number[] = [];
  const ok: T[] = [];
  let failed = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      for (let i = next++; i < n; i = next++) {
        const s = performance.now();
        const r = await one(i).catch((e) => {
          onError?.(e);
          return null;
        });
        lat.push(performance.now() - s);
        if (r === null) failed++;
        else ok.push(r);
      }
    }),
  );
  return { ms: performance.now() - t0, lat: lat.sort((a, b) => a - b), ok, failed };
}

/**
 * Reads every file under `roots` once, to the end (a root may be a link to a directory: `warehouse/current/<domain>`), so
 * that the OS page cache holds them before a bench measures a cold process (issue 22: "the files read once before so
 * only the process is cold"). Returns what was read, and the page cache's size after it (`Cached` of /proc/meminfo;
 * null elsewhere): at least the bytes read when they can all have stayed.
 */
export async function readTreesOnce(
  roots: string[],
): Promise<{ files: number; bytes: number; ms: number; page_cache_bytes: number | null }> {
  const t0 = performance.now();
  const buf = Buffer.allocUnsafe(1 << 20);
  let files = 0;
  let bytes = 0;
  for (const root of roots) {
    for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
      if (!e.isFile()) continue;
      const fh = await open(path.join(e.parentPath, e.name), 'r');
      try {
        for (;;) {
          const { bytesRead } = await fh.read(buf, 0, buf.length, null);
          if (bytesRead === 0) break;
          bytes += bytesRead;
        }
      } finally {
        await fh.close();
      }
      files++;
    }
  }
  let cached: number | null = null;
  try {
    const m = /^Cached:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) cached = Number(m[1]) * 1024;
  } catch {
    cached = null;
  }
  return { files, bytes, ms: Math.round(performance.now() - t0), page_cache_bytes: cached };
}

/** Copies a tree as hard links, `.complete` markers left out (a bench never writes into a linked file: it unlinks first). */
export async function linkTree(from: string, to: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(from, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || e.name === '.complete') continue;
    const src = path.join(e.parentPath, e.name);
    const dst = path.join(to, path.relative(from, src));
    await mkdir(path.dirname(dst), { recursive: true });
    await link(src, dst);
    n++;
  }
  return n;
}

/**
 * One in-process run of `pipeline` over `opts.inputDir`, forced, as the incremental benches time it: seconds,
 * stage seconds (plan = scan, stat and hash, up to the first ingest event; parse, up to the first publish event;
 * publish), files parsed / reused / removed, child jobs, rows, peak RSS, and the publish's mode, phase times and
 * tables written and hard-linked.
 */
export async function measurePipelineRun(
  pipeline: Pipeline,
  name: string,
  opts: { config: Config; log: Logger; inputDir: string; concurrency: number; full?: boolean },
) {
  const rss = trackPeakRss();
  const t0 = Date.now();
  const marks: { ingest?: number; publish?: number } = {};
  const r = await runPipelineInProcess(pipeline, {
    config: opts.config,
    log: opts.log,
    inputDir: opts.inputDir,
    force: true,
    full: opts.full,
    concurrency: opts.concurrency,
    onProgress: (e) => {
      if (e.stage === 'ingest') marks.ingest ??= Date.now();
      if (e.stage === 'publish') marks.publish ??= Date.now();
    },
  });
  const end = Date.now();
  const sec = (a: number, b: number) => Math.round((b - a) / 100) / 10;
  const out = {
    run: name,
    seconds: sec(t0, end),
    files_parsed: r.incremental?.parsed ?? null,
    files_reused: r.incremental?.reused ?? null,
    files_removed: r.incremental?.removed ?? null,
    child_jobs: r.children.length,
    rows_parsed: r.rows,
    failed_children: r.failed_children,
    requests: 0,
    peak_rss_mb: rss.stop(),
    stage_seconds: {
      plan: sec(t0, marks.ingest ?? end),
      parse: sec(marks.ingest ?? end, marks.publish ?? end),
      publish: sec(marks.publish ?? end, end),
    },
    publish_mode: lastPublishShape.mode,
    publish_ms: { ...lastPublishTimings },
    tables_written: lastPublishShape.written.length,
    tables_linked: lastPublishShape.linked.length,
  };
  console.log(JSON.stringify(out));
  return out;
}
