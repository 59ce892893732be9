/**
 * Durable writes with the PostgreSQL state store (issue 20), in one run on one
 * database server (DATABASE_URL; a fresh database, dropped afterwards):
 *
 * - POST /api/vet and POST /api/care/{id}/event against 1, then 2 real API
 *   server processes (requests spread round-robin), every 2xx acknowledged
 *   after its COMMIT with synchronous_commit on; and against one process with
 *   the embedded store, in the same run (same machine load) for comparison;
 * - custody appends through the state store alone, in this process (no HTTP):
 *   what the store costs per append, apart from the HTTP layer;
 * - the same rows inserted by `pgbench` with plain SQL (one transaction per
 *   vetting: INSERT the record + UPDATE the balance; per event: lock the
 *   document row, INSERT the event, UPDATE the head), same row sizes, same
 *   number of clients: what this machine's PostgreSQL can do without us.
 *
 * Skips with a notice without DATABASE_URL. Load: BENCH_PG_VETS (default
 * 2,000), BENCH_PG_EVENTS (4,000), BENCH_CONCURRENCY (64), BENCH_PGBENCH_SECONDS
 * (8). The API processes, PostgreSQL and this load generator share the
 * machine's cores: the result says how many.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { generateFmcsaSample } from '../ingest/fmcsa/fmcsa.sample.ts';
import { fmcsaPipeline } from '../jobs/fmcsa/fmcsa.pipeline.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { ensureSample } from '../jobs/sample.ts';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { PgStateStore } from '../service/platform/state.postgres.ts';
import { StateStore, stateDbPath } from '../service/platform/state.store.ts';
import { appendCareEvent, createCareDocument } from '../service/care/care.queries.ts';
import { grantCredits, issueApiKey } from '../service/vetting/credits.ts';
import { percentile, runLoad as load, startServiceProcess, writeResult } from './bench-kit.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CARRIERS = Number(process.env.BENCH_CARRIERS ?? 20_000);
const VETS = Number(process.env.BENCH_PG_VETS ?? 2_000);
const EVENTS = Number(process.env.BENCH_PG_EVENTS ?? 4_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const PGBENCH_SECONDS = Number(process.env.BENCH_PGBENCH_SECONDS ?? 8);
const base = path.join(ROOT, 'data', 'bench-vet');
const dataDir = path.join(base, 'data');

if (!process.env.DATABASE_URL) {
  console.log('[bench vet-postgres] skipped: set DATABASE_URL (a PostgreSQL server this run may create a database on)');
  process.exit(0);
}
const adminUrl = process.env.DATABASE_URL;

function startServer(url: string): Promise<{ proc: ChildProcess; url: string }> {
  return startServiceProcess({ DATA_DIR: dataDir, DATABASE_URL: url });
}

/** CPU time (user + system, ms) the given processes have used so far (/proc; 0 for a process that is gone). */
function cpuMsOf(pids: number[]): number {
  const tick = 1000 / 100; // Linux USER_HZ
  let ms = 0;
  for (const pid of pids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ms += (Number(f[11]) + Number(f[12])) * tick; // utime, stime (fields 14 and 15)
    } catch {
      // gone
    }
  }
  return ms;
}

/**
 * Runs `phase` and says where the CPU went, per acknowledged request: the API processes, this load generator, and
 * the PostgreSQL backends serving this run's database (what bounds throughput on a machine whose cores they share).
 */
async function withCpu<T extends { ok: unknown[] }>(
  apiPids: number[],
  pgPids: () => Promise<number[]>,
  phase: () => Promise<T>,
): Promise<{ r: T; cpu_ms_per_request: { api: number; load_generator: number; postgres: number } }> {
  const pg0 = await pgPids();
  const [api0, gen0, db0] = [cpuMsOf(apiPids), process.cpuUsage(), cpuMsOf(pg0)];
  const r = await phase();
  const pg1 = await pgPids();
  const gen = process.cpuUsage(gen0);
  const n = Math.max(1, r.ok.length);
  const round = (x: number) => Math.round((x / n) * 1000) / 1000;
  return {
    r,
    cpu_ms_per_request: {
      api: round(cpuMsOf(apiPids) - api0),
      load_generator: round((gen.user + gen.system) / 1000),
      // Backends still connected, from before the phase; backends that connected during it, from their start.
      postgres: round(cpuMsOf(pg1.filter((p) => pg0.includes(p))) - db0 + cpuMsOf(pg1.filter((p) => !pg0.includes(p)))),
    },
  };
}

const summary = (r: { ms: number; lat: number[]; ok: unknown[]; failed: number }, requests: number) => ({
  requests,
  ok: r.ok.length,
  failed: r.failed,
  seconds: Math.round(r.ms) / 1000,
  per_second: Math.round((r.ok.length / r.ms) * 1000),
  p50_ms: percentile(r.lat, 50),
  p99_ms: percentile(r.lat, 99),
});

// The warehouse the vettings read (shared with bench/vet.bench.ts).
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: '' });
const inputDir = path.join(base, `input-${CARRIERS}`);
await ensureSample(inputDir, {
  scale: 'small',
  seed: 42,
  generators: [{ name: 'fmcsa', generate: (o) => generateFmcsaSample({ ...o, carriers: CARRIERS }) }],
});
if (!existsSync(path.join(dataDir, 'warehouse', 'fmcsa', 'CURRENT')))
  await runPipelineInProcess(fmcsaPipeline, { config, log: silentLogger, inputDir, force: true });
const reader = await SnapshotReader.open(dataDir, 'fmcsa', { poolSize: 1 });
const dots = (await reader.query('SELECT dot_number FROM carriers ORDER BY dot_number')).map((r) => Number(r.dot_number));
await reader.close();

// A fresh database for this run.
const dbName = `proofline_bench_${Date.now()}`;
const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
await admin.unsafe(`CREATE DATABASE ${dbName}`);
const dbUrlObj = new URL(adminUrl);
dbUrlObj.pathname = `/${dbName}`;
const dbUrl = dbUrlObj.toString();

/** The PostgreSQL backends of this run's database (their CPU is the database's share of each write). */
const pidsSql = postgres(dbUrl, { max: 1, onnotice: () => undefined });
const pgPids = async () =>
  (await pidsSql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).map((r) =>
    Number(r.pid),
  );

const result: Record<string, unknown> = {
  carriers: CARRIERS,
  concurrency: CONCURRENCY,
  cpus: os.cpus().length,
  durable: 'each 2xx after its group COMMIT, synchronous_commit = on',
  shared_machine: 'API processes, PostgreSQL, pgbench and the load generator share these cores',
};
try {
  // The embedded store in the same run (same machine load), for comparison: a fresh state directory (API keys
  // live there too, so this comes first), its own key.
  await rm(path.join(dataDir, 'state'), { recursive: true, force: true });
  const embedded = await StateStore.open(stateDbPath(dataDir));
  await grantCredits(embedded, 'bench-enterprise', 0, 'enterprise', new Date());
  const { api_key: embeddedKey } = await issueApiKey(embedded, dataDir, 'bench-enterprise', new Date(), { hourlyLimit: 100_000_000 });
  await embedded.close();
  const store = await PgStateStore.open(dbUrl);
  await grantCredits(store, 'bench-enterprise', 0, 'enterprise', new Date());
  const { api_key } = await issueApiKey(store, dataDir, 'bench-enterprise', new Date(), { hourlyLimit: 100_000_000 });
  await store.close();

  const modes = [
    { name: 'embedded_1_node', nodes: 1, url: '', key: embeddedKey },
    { name: 'api_1_node', nodes: 1, url: dbUrl, key: api_key },
    { name: 'api_2_nodes', nodes: 2, url: dbUrl, key: api_key },
  ];
  for (const { name, nodes, url, key } of modes) {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'accept-encoding': 'identity' };
    const servers = await Promise.all(Array.from({ length: nodes }, () => startServer(url)));
    const post = (i: number, p: string, body: unknown) =>
      fetch(`${servers[i % nodes]!.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
    // Warm-up, not measured: 300 requests per process of each kind, so that every process's JIT and connection pool
    // are warm before timing (with two processes, a shared 300 left each half-warm and charged the rest to the run).
    await load(300 * nodes, 16, async (i) =>
      (await post(i, '/api/vet', { dot_number: dots[(i * 7919) % dots.length], broker_id: 'bench' })).ok ? 1 : null,
    );
    console.log(`[${name}] POST /api/vet × ${VETS}, ${CONCURRENCY} in flight`);
    const apiPids = servers.map((x) => x.proc.pid!);
    const vets = await withCpu(apiPids, pgPids, () =>
      load(VETS, CONCURRENCY, async (i) => {
        const r = await post(i, '/api/vet', { dot_number: dots[(i * 104_729) % dots.length], broker_id: 'bench' });
        if (r.status === 200) return ((await r.json()) as { vetting_id: string }).vetting_id;
        await r.text();
        return null;
      }),
    );
    const docs: string[] = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const r = await post(i, '/api/care', {
        shipment: { ref: `BENCH-${name}-${i}`, commodity: 'general freight', value_usd: 10_000 },
        parties: { broker: 'bench', carrier: 'bench-carrier' },
      });
      const id = ((await r.json()) as { document_id: string }).document_id;
      docs.push(id);
      for (const stage of ['TENDER', 'PICKUP_HANDOFF']) await post(i, `/api/care/${id}/event`, { stage, actor: 'bench' });
    }
    await load(300 * nodes, 16, async (i) =>
      (await post(i, `/api/care/${docs[i % docs.length]}/event`, { stage: 'IN_TRANSIT', actor: { name: 'warm-up' } })).ok ? 1 : null,
    );
    console.log(`[${name}] POST /api/care/{id}/event × ${EVENTS} over ${docs.length} documents`);
    // Request i goes to node i % nodes and document i % 64: each document is written by one node only.
    const events = await withCpu(apiPids, pgPids, () =>
      load(EVENTS, CONCURRENCY, async (i) => {
        const r = await post(i, `/api/care/${docs[i % docs.length]}/event`, {
          stage: 'IN_TRANSIT',
          actor: { name: 'eld' },
          evidence: { ping: i },
        });
        if (r.status === 201) return ((await r.json()) as { hash: string }).hash;
        await r.text();
        return null;
      }),
    );
    for (const s of servers) s.proc.kill('SIGTERM');
    await Promise.all(servers.map((s) => new Promise((r) => s.proc.once('exit', r))));
    result[name] = {
      vet: { ...summary(vets.r, VETS), cpu_ms_per_request: vets.cpu_ms_per_request },
      care_event: { ...summary(events.r, EVENTS), cpu_ms_per_request: events.cpu_ms_per_request },
    };
  }

  // The state store alone, in this process (no HTTP, no second process): custody appends through PgStateStore with
  // as many in flight, over 64 documents of their own. Separates what the store costs per append (round trips,
  // group commit, hashing) from what the HTTP layer and the load generator cost on this machine's cores.
  {
    const store = await PgStateStore.open(dbUrl);
    const docs: string[] = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const d = await createCareDocument(
        store,
        { shipment: { ref: `STORE-${i}`, commodity: 'general freight', value_usd: 10_000 }, parties: { broker: 'bench', carrier: 'c' } },
        new Date(),
      );
      docs.push(d.document_id);
      for (const stage of ['TENDER', 'PICKUP_HANDOFF'] as const)
        await appendCareEvent(store, d.document_id, { stage, actor: 'bench', evidence: {} }, new Date());
    }
    const commits0 = store.stats.commits;
    console.log(`[store_only_1_process] appendCareEvent × ${EVENTS} over ${docs.length} documents, ${CONCURRENCY} in flight`);
    const { r: events, cpu_ms_per_request } = await withCpu([], pgPids, () =>
      load(
        EVENTS,
        CONCURRENCY,
        async (i) =>
          (
            await appendCareEvent(
              store,
              docs[i % docs.length]!,
              { stage: 'IN_TRANSIT', actor: { name: 'eld' }, evidence: { ping: i } },
              new Date(),
            )
          ).hash,
      ),
    );
    result.store_only_1_process = {
      // load_generator: this process, which here is the store itself (no HTTP).
      care_event: { ...summary(events, EVENTS), groups: store.stats.commits - commits0, cpu_ms_per_request },
    };
    await store.close();
  }

  // Every acknowledged write is in the database, and the row sizes pgbench will write.
  const sql = postgres(dbUrl, { max: 1, onnotice: () => undefined });
  const [sizes] = await sql`SELECT avg(length(record_json))::int AS record, avg(length(snapshot_json))::int AS snapshot,
    (SELECT avg(length(evidence_json) + length(actor_json))::int FROM care_events) AS event FROM vetting_records`;
  await sql`CREATE SEQUENCE IF NOT EXISTS pgbench_ids`;
  await sql`INSERT INTO accounts VALUES ('pgbench', 'payg', 1000000000, NULL, 'now', 'now') ON CONFLICT DO NOTHING`;
  await sql`INSERT INTO care_documents SELECT 'PGB-DOC-' || g, 'now', '{}', '{}', NULL, NULL, 'h', 0, 'h', NULL FROM generate_series(1, ${CONCURRENCY}) g ON CONFLICT DO NOTHING`;
  await sql.end();

  // pgbench: the same rows with plain SQL, one transaction per operation, as many clients as requests in flight.
  const pgBin = spawnSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1'], {
    encoding: 'utf8',
  }).stdout.trim();
  const pgbench = existsSync(path.join(pgBin, 'pgbench')) ? path.join(pgBin, 'pgbench') : 'pgbench';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'proofline-pgbench-'));
  const vetScript = path.join(dir, 'vet.sql');
  writeFileSync(
    vetScript,
    `\\set dot random(1, 99999999)
BEGIN;
INSERT INTO vetting_records VALUES ('PGB-' || nextval('pgbench_ids'), :dot, 'bench', 'pgbench', 1, 'now', 0.5, 'LOW', 'APPROVE', repeat('a', 64), repeat('r', ${sizes!.record}), repeat('s', ${sizes!.snapshot}), repeat('g', 86), 'k');
UPDATE accounts SET balance = balance - 1 WHERE account_id = 'pgbench';
END;
`,
  );
  const eventScript = path.join(dir, 'event.sql');
  writeFileSync(
    eventScript,
    `\\set d random(1, ${CONCURRENCY})
BEGIN;
SELECT event_count FROM care_documents WHERE document_id = 'PGB-DOC-' || :d FOR UPDATE;
INSERT INTO care_events SELECT document_id, event_count + 1, 'IN_TRANSIT', repeat('a', ${sizes!.event ?? 60}), '{}', NULL, 'now', head_hash, md5(random()::text) FROM care_documents WHERE document_id = 'PGB-DOC-' || :d;
UPDATE care_documents SET event_count = event_count + 1, head_hash = md5(random()::text) WHERE document_id = 'PGB-DOC-' || :d;
END;
`,
  );
  const runPgbench = (script: string) => {
    const r = spawnSync(pgbench, ['-n', '-c', String(CONCURRENCY), '-j', '2', '-T', String(PGBENCH_SECONDS), '-f', script, dbUrl], {
      encoding: 'utf8',
    });
    const tps = /tps = ([\d.]+)/.exec(r.stdout ?? '');
    const latency = /latency average = ([\d.]+) ms/.exec(r.stdout ?? '');
    if (!tps) console.log(r.stdout, r.stderr);
    return {
      per_second: tps ? Math.round(Number(tps[1])) : null,
      latency_avg_ms: latency ? Number(latency[1]) : null,
      clients: CONCURRENCY,
      seconds: PGBENCH_SECONDS,
    };
  };
  console.log(`pgbench: plain-SQL vettings and events, ${CONCURRENCY} clients × ${PGBENCH_SECONDS} s each`);
  result.plain_sql_pgbench = { vet: runPgbench(vetScript), care_event: runPgbench(eventScript), row_sizes: sizes };
  await rm(dir, { recursive: true, force: true });
} finally {
  await pidsSql.end({ timeout: 1 }).catch(() => undefined);
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}
result.load_average = os.loadavg().map((x) => Math.round(x * 10) / 10);
console.log(JSON.stringify(result, null, 2));
writeResult('vet-postgres', result);
