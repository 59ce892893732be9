/**
 * Durable-write throughput against a real API server on loopback (child
 * process, bounded by request counts):
 *
 * - POST /api/vet: vetting records (warehouse read, risk model, canonical
 *   snapshot, Ed25519 signature, credit debit), target >= 500/s;
 * - POST /api/care/{id}/event: custody events spread over many documents,
 *   target >= 1,000/s.
 *
 * Every 2xx is acknowledged only after its group transaction committed (DuckDB
 * fsyncs the WAL on COMMIT). After the run the server is stopped and the state
 * database reopened: every acknowledged record must be there. A last phase
 * runs the same appends against the store alone (no HTTP) for comparison.
 *
 * Data: the fmcsa sample at BENCH_CARRIERS carriers (default 20,000 = small),
 * ingested with the real pipeline into data/bench-vet/. BENCH_VETS,
 * BENCH_EVENTS and BENCH_CONCURRENCY set the load.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { appendCareEvent, createCareDocument } from '../service/care/care.queries.ts';
import { generateFmcsaSample } from '../ingest/fmcsa/fmcsa.sample.ts';
import { fmcsaPipeline } from '../jobs/fmcsa/fmcsa.pipeline.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { ensureSample } from '../jobs/sample.ts';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { StateStore, stateDbPath } from '../service/platform/state.store.ts';
import { grantCredits, issueApiKey } from '../service/vetting/credits.ts';
import { percentile, runLoad, startServiceProcess, writeResult } from './bench-kit.ts';

/** `runLoad` with thrown errors kept for the failure report. */
const load = <T>(n: number, c: number, one: (i: number) => Promise<T | null>) => runLoad(n, c, one, (e) => failures.push(String(e)));

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CARRIERS = Number(process.env.BENCH_CARRIERS ?? 20_000);
const VETS = Number(process.env.BENCH_VETS ?? 6_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 12_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const base = path.join(ROOT, 'data', 'bench-vet');
const dataDir = path.join(base, 'data');
const failures: string[] = [];

function startServer(): Promise<{ proc: ChildProcess; url: string }> {
  return startServiceProcess({ DATA_DIR: dataDir });
}

const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const inputDir = path.join(base, `input-${CARRIERS}`);
console.log(`fmcsa sample: ${CARRIERS} carriers → ${path.relative(ROOT, inputDir)}`);
await ensureSample(inputDir, {
  scale: 'small',
  seed: 42,
  generators: [{ name: 'fmcsa', generate: (o) => generateFmcsaSample({ ...o, carriers: CARRIERS }) }],
});
if (!existsSync(path.join(dataDir, 'warehouse', 'fmcsa', 'CURRENT')))
  await runPipelineInProcess(fmcsaPipeline, { config, log: silentLogger, inputDir, force: true });
await rm(path.join(dataDir, 'state'), { recursive: true, force: true }); // fresh state per run

const reader = await SnapshotReader.open(dataDir, 'fmcsa', { poolSize: 1 });
const dots = (await reader.query('SELECT dot_number FROM carriers ORDER BY dot_number')).map((r) => Number(r.dot_number));
await reader.close();

let store = await StateStore.open(stateDbPath(dataDir));
await grantCredits(store, 'bench-enterprise', 0, 'enterprise', new Date());
const { api_key } = await issueApiKey(store, dataDir, 'bench-enterprise', new Date(), { hourlyLimit: 100_000_000 });
await store.close();

const server = await startServer();
// identity: the API layer brotli-compresses responses for clients that accept it, which costs more CPU than the write itself.
const auth = { 'content-type': 'application/json', authorization: `Bearer ${api_key}`, 'accept-encoding': 'identity' };
const post = (p: string, body: unknown) => fetch(`${server.url}${p}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });

// Warm-up (JIT, connection pool, DuckDB caches); not counted.
await load(300, 16, async (i) =>
  (await post('/api/vet', { dot_number: dots[(i * 7919) % dots.length], broker_id: 'bench' })).ok ? 1 : null,
);

console.log(`POST /api/vet × ${VETS}, ${CONCURRENCY} in flight`);
const vets = await load(VETS, CONCURRENCY, async (i) => {
  const r = await post('/api/vet', { dot_number: dots[(i * 104_729) % dots.length], broker_id: 'bench' });
  if (r.status === 200) return ((await r.json()) as { vetting_id: string }).vetting_id;
  failures.push(`${r.status} ${(await r.text()).slice(0, 200)}`);
  return null;
});
if (failures.length) console.log('vet failures (first 3):', failures.slice(0, 3));

const docs: string[] = [];
for (let i = 0; i < CONCURRENCY; i++) {
  const r = await post('/api/care', {
    shipment: { ref: `BENCH-${i}`, commodity: 'general freight', value_usd: 10_000 },
    parties: { broker: 'bench', carrier: 'bench-carrier' },
  });
  const id = ((await r.json()) as { document_id: string }).document_id;
  docs.push(id);
  for (const stage of ['TENDER', 'PICKUP_HANDOFF']) await post(`/api/care/${id}/event`, { stage, actor: 'bench' });
}
console.log(`POST /api/care/{id}/event × ${EVENTS} over ${docs.length} documents, ${CONCURRENCY} in flight`);
const events = await load(EVENTS, CONCURRENCY, async (i) => {
  const r = await post(`/api/care/${docs[i % docs.length]}/event`, {
    stage: 'IN_TRANSIT',
    actor: { name: 'eld' },
    evidence: { ping: i, lat: 41.8, lon: -87.6 },
  });
  if (r.status === 201) return ((await r.json()) as { hash: string }).hash;
  await r.text();
  return null;
});

const rssMb = (() => {
  try {
    const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.proc.pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
})();
server.proc.kill('SIGTERM');
await new Promise((r) => server.proc.once('exit', r));

// Every acknowledged write is in the database.
store = await StateStore.open(stateDbPath(dataDir));
// The store alone (no HTTP): the same appends through the group-commit queue, to separate store capacity from the HTTP layer.
const storeDocs: string[] = [];
for (let i = 0; i < CONCURRENCY; i++) {
  const d = await createCareDocument(
    store,
    { shipment: { ref: `S-${i}`, commodity: 'general freight', value_usd: 1 }, parties: { broker: 'bench', carrier: 'c' } },
    new Date(),
  );
  storeDocs.push(d.document_id);
  for (const stage of ['TENDER', 'PICKUP_HANDOFF'] as const)
    await appendCareEvent(store, d.document_id, { stage, actor: 'bench', evidence: {} }, new Date());
}
const storeEvents = await load(
  EVENTS,
  CONCURRENCY,
  async (i) =>
    (
      await appendCareEvent(
        store,
        storeDocs[i % storeDocs.length]!,
        { stage: 'IN_TRANSIT', actor: { name: 'eld' }, evidence: { ping: i } },
        new Date(),
      )
    ).hash,
);
const vetIds = new Set((await store.query('SELECT vetting_id FROM vetting_records')).map((r) => String(r.vetting_id)));
const eventHashes = new Set((await store.query('SELECT hash FROM care_events')).map((r) => String(r.hash)));
await store.close();
const missingVets = vets.ok.filter((id) => !vetIds.has(id)).length;
const missingEvents = events.ok.filter((h) => !eventHashes.has(h)).length;

const result = {
  carriers: CARRIERS,
  concurrency: CONCURRENCY,
  durable: 'each 2xx after its group COMMIT (DuckDB fsyncs the WAL per commit)',
  vet: {
    requests: VETS,
    ok: vets.ok.length,
    failed: vets.failed,
    seconds: Math.round(vets.ms) / 1000,
    per_second: Math.round((vets.ok.length / vets.ms) * 1000),
    p50_ms: percentile(vets.lat, 50),
    p99_ms: percentile(vets.lat, 99),
    target_per_second: 500,
    missing_after_restart: missingVets,
  },
  care_event: {
    requests: EVENTS,
    ok: events.ok.length,
    failed: events.failed,
    documents: docs.length,
    seconds: Math.round(events.ms) / 1000,
    per_second: Math.round((events.ok.length / events.ms) * 1000),
    p50_ms: percentile(events.lat, 50),
    p99_ms: percentile(events.lat, 99),
    target_per_second: 1000,
    missing_after_restart: missingEvents,
  },
  store_only_care_event: {
    requests: EVENTS,
    ok: storeEvents.ok.length,
    seconds: Math.round(storeEvents.ms) / 1000,
    per_second: Math.round((storeEvents.ok.length / storeEvents.ms) * 1000),
    p50_ms: percentile(storeEvents.lat, 50),
    p99_ms: percentile(storeEvents.lat, 99),
  },
  server_peak_rss_mb: rssMb,
  load_average: os.loadavg().map((x) => Math.round(x * 10) / 10),
};
console.log(JSON.stringify(result, null, 2));
writeResult('vet', result);
if (missingVets || missingEvents) {
  console.error('acknowledged writes missing after restart');
  process.exit(1);
}
