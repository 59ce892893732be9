/**
 * Honest writers while a hostile writer repeats (issue 25), against a real
 * API server on loopback (child process, empty DATA_DIR: proof-of-care writes
 * need only the state store):
 *
 * - baseline: POST /api/care/{id}/event from BENCH_CONCURRENCY honest clients;
 * - the same while as many clients repeat a cheap valid request (a metered
 *   GET answered 404): the control, what any other client costs;
 * - the same while hostile clients (a separate process, so they do not share
 *   the honest clients' CPU) repeat bodies the canonical hashing cannot
 *   take (a lone surrogate in evidence, 3,000 levels of nesting in 6 KB):
 *   each is a 400 before anything is written;
 * - the same while hostile clients repeat 100 MB chunked bodies: each is a
 *   413 after 1 MB is read.
 *
 * Reports honest events/s and p99 per phase, the hostile answers' statuses,
 * and the server's RSS: before, peak during the 100 MB phase (sampled every
 * 20 ms from /proc), and the kernel's high-water mark. Writes
 * bench/results/hostile.json. BENCH_EVENTS (default 3,000 per phase),
 * BENCH_CONCURRENCY (16), BENCH_HOSTILE (4 hostile clients).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServiceProcess, writeResult } from './bench-kit.ts';
import { rssOf } from './hostile-client.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const EVENTS = Number(process.env.BENCH_EVENTS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const HOSTILE = Number(process.env.BENCH_HOSTILE ?? 4);
const MB = 1024 * 1024;

function startServer(dataDir: string): Promise<{ proc: ChildProcess; url: string }> {
  return startServiceProcess({ DATA_DIR: dataDir, RATE_LIMIT_FREE_PER_HOUR: '100000000', LOOKUP_GUARD_PER_HOUR: '100000000' });
}

const hwmMb = (pid: number) => {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : null;
};
const p = (sorted: number[], q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'proofline-bench-hostile-'));
const server = await startServer(dataDir);
const headers = { 'content-type': 'application/json', 'accept-encoding': 'identity' };
const post = (route: string, body: string) => fetch(`${server.url}${route}`, { method: 'POST', headers, body });

const docs: string[] = [];
for (let i = 0; i < CONCURRENCY; i++) {
  const r = await post(
    '/api/care',
    JSON.stringify({ shipment: { ref: `H-${i}`, commodity: 'general freight', value_usd: 1 }, parties: { broker: 'b', carrier: 'c' } }),
  );
  if (r.status !== 201) throw new Error(`care document: ${r.status} ${await r.text()}`);
  const id = ((await r.json()) as { document_id: string }).document_id;
  docs.push(id);
  for (const stage of ['TENDER', 'PICKUP_HANDOFF']) await post(`/api/care/${id}/event`, JSON.stringify({ stage, actor: 'b' }));
}

/** Honest writers: EVENTS appends, CONCURRENCY in flight; events/s and latency percentiles. */
async function honest(): Promise<{ events_per_s: number; p50_ms: number; p99_ms: number; failed: number }> {
  const lat: number[] = [];
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    docs.map(async (id) => {
      for (let i = next++; i < EVENTS; i = next++) {
        const s = performance.now();
        const r = await post(`/api/care/${id}/event`, JSON.stringify({ stage: 'IN_TRANSIT', actor: 'eld', evidence: { ping: i } }));
        await r.text();
        if (r.status !== 201) failed++;
        lat.push(performance.now() - s);
      }
    }),
  );
  const ms = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return { events_per_s: Math.round((EVENTS / ms) * 1000), p50_ms: p(lat, 0.5), p99_ms: p(lat, 0.99), failed };
}

/** Runs a hostile writer of `kind` (its own process, HOSTILE clients) while `work` runs; returns work's result and its statuses. */
async function under<T>(
  kind: 'control' | 'unhashable' | 'huge',
  work: () => Promise<T>,
): Promise<{ result: T; hostile: Record<string, number> }> {
  const target = `${server.url}/api/care/${docs[0]}/event`;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/hostile-client.ts'), target, kind, String(HOSTILE)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  await new Promise((r) => setTimeout(r, 1500)); // the attacker is up and writing
  const result = await work();
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { result, hostile: out ? (JSON.parse(out) as Record<string, number>) : {} };
}

await honest(); // warm-up
const rssBefore = Math.round(rssOf(server.proc.pid!) / MB);
const baseline = await honest();
console.log('baseline', baseline);

const control = await under('control', honest);
console.log('under cheap valid requests (control)', control);
const guarded = await under('unhashable', honest);
console.log('under unhashable bodies', guarded);

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(server.proc.pid!))), 20);
const huge = await under('huge', honest);
clearInterval(sampler);
console.log('under 100 MB bodies', huge);

const result = {
  events_per_phase: EVENTS,
  honest_concurrency: CONCURRENCY,
  hostile_clients: HOSTILE,
  baseline,
  under_cheap_valid_requests: { ...control.result, hostile_answers: control.hostile },
  under_unhashable_bodies: { ...guarded.result, hostile_answers: guarded.hostile },
  under_100mb_bodies: { ...huge.result, hostile_answers: huge.hostile },
  throughput_ratio_control: Math.round((control.result.events_per_s / baseline.events_per_s) * 100) / 100,
  throughput_ratio_unhashable: Math.round((guarded.result.events_per_s / baseline.events_per_s) * 100) / 100,
  throughput_ratio_100mb: Math.round((huge.result.events_per_s / baseline.events_per_s) * 100) / 100,
  server_rss_mb: { before: rssBefore, peak_during_100mb_bodies: Math.round(peakRss / MB), high_water_mark: hwmMb(server.proc.pid!) },
};
server.proc.kill('SIGTERM');
await new Promise((r) => server.proc.once('exit', r));
await rm(dataDir, { recursive: true, force: true });
writeResult('hostile', result);
