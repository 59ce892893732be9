/**
 * Monitoring at scale (docs/monitoring.md):
 *
 * 1. Change detection between two FMCSA snapshots of BENCH_CARRIERS carriers
 *    (default 1,000,000; the full scale is 4,400,000) with
 *    BENCH_WATCHED watched carriers (default 100,000), target < 30 s at full
 *    scale. The two `carrier_risk` parquet files are built from the real
 *    pipeline's carrier_risk of a small sample (its exact columns), replicated
 *    to the scale with fresh DOT numbers; in the second one, 1 carrier in 100
 *    changes (authority revoked, a new OOS order, or a risk-level change).
 *    Detection is the production function (service/monitoring/changes.queries.ts:
 *    one DuckDB query over both files, events stored in the state store).
 * 2. Webhook deliveries to a local receiver on loopback (same process):
 *    BENCH_DELIVERIES messages (default 5,000) to one endpoint through the
 *    in-process runner (jobs/monitoring), each signed, POSTed, its attempt
 *    logged and its delivery updated in the state store; target 1,000/s.
 */
import { createServer } from 'node:http';
import os from 'node:os';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateFmcsaSample } from '../ingest/fmcsa/fmcsa.sample.ts';
import { fmcsaPipeline } from '../jobs/fmcsa/fmcsa.pipeline.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { startMonitoringRunner } from '../jobs/monitoring/monitoring.jobs.ts';
import { ensureSample } from '../jobs/sample.ts';
import { loadConfig } from '../lib/config.ts';
import { hashFile } from '../lib/hash.ts';
import { silentLogger } from '../lib/log.ts';
import { openDatabase, quoteLiteral } from '../lib/warehouse/duckdb.ts';
import { readCurrentManifest } from '../lib/warehouse/snapshot.ts';
import { snapshotDir } from '../lib/warehouse/layout.ts';
import { detectChanges } from '../service/monitoring/changes.queries.ts';
import { createEndpoint, emitEvent, attemptDelivery } from '../service/monitoring/webhooks.queries.ts';
import { StateStore, stateDbPath } from '../service/platform/state.store.ts';
import { trackPeakRss, writeResult } from './bench-kit.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CARRIERS = Number(process.env.BENCH_CARRIERS ?? 1_000_000);
const WATCHED = Number(process.env.BENCH_WATCHED ?? 100_000);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const base = path.join(ROOT, 'data', 'bench-webhooks');
const dataDir = path.join(base, 'data');

/** Publishes the small sample once with the real pipeline: the source of carrier_risk's columns. */
async function sampleCarrierRisk(): Promise<string> {
  const inputDir = path.join(base, 'input');
  const smallData = path.join(base, 'sample-data');
  await ensureSample(inputDir, {
    scale: 'small',
    seed: 42,
    generators: [{ name: 'fmcsa', generate: (o) => generateFmcsaSample({ ...o, carriers: 2_000 }) }],
  });
  const config = loadConfig({ DATA_DIR: smallData, INPUT_DIR: inputDir, LOG_LEVEL: 'silent' });
  if (!(await readCurrentManifest(smallData, 'fmcsa'))) await runPipelineInProcess(fmcsaPipeline, { config, log: silentLogger });
  const m = (await readCurrentManifest(smallData, 'fmcsa'))!;
  return path.join(snapshotDir(smallData, 'fmcsa', m.snapshot_id), 'tables', 'carrier_risk.parquet');
}

/** Writes snapshot `id` with a carrier_risk of CARRIERS rows; `changed` applies the 1-in-100 changes. */
async function writeSnapshot(source: string, id: string, changed: boolean): Promise<void> {
  const dir = snapshotDir(dataDir, 'fmcsa', id);
  await mkdir(path.join(dir, 'tables'), { recursive: true });
  const file = path.join(dir, 'tables', 'carrier_risk.parquet');
  const db = await openDatabase(':memory:', { threads: 2, memoryLimit: '2GB', tempDirectory: path.join(dataDir, 'tmp') });
  const conn = await db.connect();
  // Stable base rows: LOW risk, active authority, no active OOS order; row i is carrier DOT 1,000,000 + i.
  await conn.run(
    `CREATE TABLE src AS SELECT row_number() OVER (ORDER BY dot_number) - 1 AS rn, * FROM read_parquet(${quoteLiteral(source)})
     WHERE authority_status = 'ACTIVE' AND oos_orders_active = 0 AND risk_level = 'LOW'`,
  );
  const n = Number((await conn.runAndReadAll('SELECT count(*) FROM src')).getRows()[0]![0]);
  const change = changed
    ? `, CASE WHEN hash(i) % 300 = 0 THEN 'INACTIVE' ELSE authority_status END AS authority_status,
         CASE WHEN hash(i) % 300 = 1 THEN 1 ELSE oos_orders_active END AS oos_orders_active,
         CASE WHEN hash(i) % 300 = 2 THEN 'HIGH' ELSE risk_level END AS risk_level`
    : '';
  await conn.run(
    `COPY (SELECT * EXCLUDE (rn, i${changed ? ', authority_status, oos_orders_active, risk_level' : ''}) REPLACE ((1000000 + i)::INTEGER AS dot_number)${change}
           FROM range(${CARRIERS}) r(i) JOIN src ON src.rn = i % ${n} ORDER BY i)
     TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)`,
  );
  conn.closeSync();
  db.closeSync();
  const manifest = {
    snapshot_id: id,
    run_id: `bench-${id}`,
    published_at: new Date().toISOString(),
    domain: 'fmcsa',
    input_digest: null,
    tables: { carrier_risk: { rows: CARRIERS, sha256: (await hashFile(file)).sha256, bytes: 0, storage: 'parquet' } },
    meta: {},
    duckdb_version: 'bench',
  };
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
}

async function main(): Promise<void> {
  const rss = trackPeakRss();
  const loadBefore = os.loadavg().map((x) => Math.round(x * 10) / 10);
  await rm(dataDir, { recursive: true, force: true });
  const source = await sampleCarrierRisk();
  let t = performance.now();
  await writeSnapshot(source, 'bench-a', false);
  await writeSnapshot(source, 'bench-b', true);
  const buildMs = Math.round(performance.now() - t);
  console.log(`two snapshots of ${CARRIERS} carriers built in ${buildMs} ms`);

  const store = await StateStore.open(stateDbPath(dataDir));
  // WATCHED carriers spread evenly over the snapshot, on 1,000 accounts.
  const stride = Math.max(1, Math.floor(CARRIERS / WATCHED));
  await store.write((tx) =>
    tx.write(
      `INSERT INTO watchlist SELECT 'acct-' || (i % 1000), (1000000 + i * ${stride})::INTEGER, '2026-01-01T00:00:00Z', 'bench' FROM range(${WATCHED}) r(i)`,
    ),
  );
  t = performance.now();
  const r = await detectChanges(store, dataDir, 'bench-a', 'bench-b', new Date(), { memoryLimit: '1GB', threads: 2 });
  const detectMs = Math.round(performance.now() - t);
  const kinds: Record<string, number> = {};
  for (const e of r.events) for (const k of e.kinds) kinds[k] = (kinds[k] ?? 0) + 1;
  console.log(`change detection: ${r.watched} watched of ${CARRIERS}, ${r.events.length} events in ${detectMs} ms`, kinds);

  // Deliveries to a local receiver.
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const opts = { privateOrigins: [origin] };
  await createEndpoint(store, 'acct-bench', { url: `${origin}/hook`, event_types: ['carrier.changed'] }, new Date(), opts);
  const ids: string[] = [];
  t = performance.now();
  await Promise.all(
    Array.from({ length: DELIVERIES }, async (_, i) => {
      const created = await emitEvent(
        store,
        undefined,
        {
          message_id: `msg_bench_${i}`,
          type: 'carrier.changed',
          data: r.events[i % Math.max(1, r.events.length)] ?? { i },
          accounts: ['acct-bench'],
        },
        new Date(),
      );
      ids.push(...created);
    }),
  );
  const emitMs = Math.round(performance.now() - t);
  const runner = await startMonitoringRunner(
    {
      deliver: (id, last) => attemptDelivery(store, id, last, () => new Date(), opts),
      pendingDeliveries: async () => [],
      pendingDetection: async () => null,
      detect: async () => undefined,
      importRunNotices: async () => undefined,
    },
    { log: silentLogger, pollMs: 0, concurrency: CONCURRENCY },
  );
  t = performance.now();
  for (const id of ids) await runner.enqueueDelivery(id);
  await runner.idle();
  const deliverMs = Math.round(performance.now() - t);
  await runner.close();
  server.close();
  const delivered = Number((await store.query(`SELECT count(*)::INTEGER AS n FROM webhook_deliveries WHERE status = 'delivered'`))[0]!.n);
  await store.close();
  const perSec = Math.round((delivered / deliverMs) * 1000);
  console.log(
    `deliveries: ${delivered}/${DELIVERIES} delivered (${received} received) in ${deliverMs} ms = ${perSec}/s; emit ${emitMs} ms`,
  );
  writeResult('webhooks', {
    scale: { carriers: CARRIERS, watched: WATCHED, full_scale_target: { carriers: 4_400_000, watched: 100_000 } },
    change_detection: {
      snapshots_build_ms: buildMs,
      detect_ms: detectMs,
      watched: r.watched,
      events: r.events.length,
      kinds,
      target: '< 30 s at 4.4 M carriers / 100k watched',
    },
    deliveries: {
      messages: DELIVERIES,
      delivered,
      received,
      concurrency: CONCURRENCY,
      emit_ms: emitMs,
      deliver_ms: deliverMs,
      per_second: perSec,
      target_per_second: 1000,
      note: 'receiver in the same process on loopback; each delivery = state read, sign, POST, attempt + delivery rows committed',
    },
    peak_rss_mb: rss.stop(),
    // The machine is shared: 1/5/15-minute load averages (2 cores) before and after the run.
    load_average: { before: loadBefore, after: os.loadavg().map((x) => Math.round(x * 10) / 10) },
  });
  if (existsSync(base) && process.env.BENCH_KEEP !== '1') await rm(base, { recursive: true, force: true });
}

await main();
