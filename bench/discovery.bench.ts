/**
 * AI discovery: cost of building and signing the file set, of serving the
 * manifest (in process and over loopback HTTP), of verifying a tier-3
 * document (RFC 8785 hash + secp256k1 recovery), and of a full agent run
 * (discover + verify every file and page). Writes bench/results/discovery.json.
 * Runs on an empty warehouse: the discovery files do not depend on data size
 * beyond one feed item per snapshot.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { serve } from 'h3';
import { bytesToHex } from '@noble/hashes/utils.js';
import { discover, generateSecretKey, verifyDocument } from '../lib/discovery/index.ts';
import { silentLogger } from '../lib/log.ts';
import { createApp } from '../service/app.ts';
import type { ServiceDeps } from '../service/platform/deps.ts';
import { trackPeakRss, writeResult } from './bench-kit.ts';

const rss = trackPeakRss();
const dir = await mkdtemp(path.join(os.tmpdir(), 'proofline-bench-discovery-'));
const keyPath = path.join(dir, 'secp256k1.hex');
await writeFile(keyPath, `0x${bytesToHex(generateSecretKey())}\n`, { mode: 0o600 });
const deps: ServiceDeps = {
  readers: {},
  log: silentLogger,
  now: () => new Date(),
  startedAt: new Date(),
  options: { publicBaseUrl: 'http://bench.test', snapshotStaleHours: 48, version: 'bench', dataDir: dir, discoveryKeyPath: keyPath },
};
const app = createApp(deps);
const get = (p: string, init?: RequestInit) => app.fetch(new Request(`${deps.options.publicBaseUrl}${p}`, init));

function pct(sorted: number[], p: number): number {
  return +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(3);
}

let t = performance.now();
await (await get('/.well-known/ai')).text();
const coldBuildMs = +(performance.now() - t).toFixed(1);

const N = 5000;
t = performance.now();
for (let i = 0; i < N; i++) await (await get('/.well-known/ai')).text();
const inProcessRps = Math.round(N / ((performance.now() - t) / 1000));

const manifestText = await (await get('/.well-known/ai')).text();
const V = 500;
t = performance.now();
for (let i = 0; i < V; i++) verifyDocument(JSON.parse(manifestText), 'x', { observedAt: 'x' });
const verifyPerSec = Math.round(V / ((performance.now() - t) / 1000));

const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
await server.ready();
const url = server.url!.replace(/\/$/, '');
deps.options.publicBaseUrl = url;
const H = 4000;
const C = 16;
const lat: number[] = [];
let next = 0;
t = performance.now();
await Promise.all(
  Array.from({ length: C }, async () => {
    while (next < H) {
      next++;
      const s = performance.now();
      await (await fetch(`${url}/.well-known/ai`)).text();
      lat.push(performance.now() - s);
    }
  }),
);
const httpRps = Math.round(H / ((performance.now() - t) / 1000));
lat.sort((a, b) => a - b);

const R = 30;
const runs: number[] = [];
for (let i = 0; i < R; i++) {
  const s = performance.now();
  const r = await discover(url, { allowPrivate: true });
  if (!r.found || r.manifest!.signature.status !== 'verified' || r.pages.some((p) => p.status !== 'match'))
    throw new Error('agent did not verify our own files');
  runs.push(performance.now() - s);
}
runs.sort((a, b) => a - b);
await server.close(true);
await rm(dir, { recursive: true, force: true });

const result = {
  cold_build_and_sign_ms: coldBuildMs,
  manifest_in_process_rps: inProcessRps,
  manifest_http_loopback: { requests: H, concurrency: C, rps: httpRps, p50_ms: pct(lat, 50), p99_ms: pct(lat, 99) },
  verify_tier3_document_per_s: verifyPerSec,
  full_agent_run_loopback: { runs: R, p50_ms: pct(runs, 50), p99_ms: pct(runs, 99), requests_per_run: 7 + 6 },
  peak_rss_mb: rss.stop(),
};
console.log(JSON.stringify(result, null, 2));
writeResult('discovery', result);
process.exit(0);
