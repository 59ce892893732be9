/**
 * Service entry point: parses configuration once, opens the warehouse
 * readers, builds the app and serves it. `npm start` runs jobs/cli/start.ts,
 * which ingests first and then calls `startServer`.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../lib/config.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { SnapshotReader } from '../lib/warehouse/reader.ts';
import { createApp } from './app.ts';
import { collectStartupGarbage, warmUpApp, warmUpListener } from './platform/warmup.ts';
import { loadWarmupKeys, planWarmupRequests, warmEachSnapshotBeforeSwap } from './warmup/warmup.queries.ts';
import { ConnectionTracker, createNodeListener, serverTimeouts } from './platform/node-listener.ts';
import { discoveryOptions } from './discovery/discovery.options.ts';
import type { Readers, ServiceDeps } from './platform/deps.ts';
import { stateDbPath, type StateStore } from './platform/state.store.ts';
import { DeadlineStateStore } from './platform/state.deadline.ts';
import { claimStateStore, type StateClaim } from './platform/state.claim.ts';
import { PgStateStore } from './platform/state.postgres.ts';
import { createLiveRefresher } from './vetting/live-refresh.ts';
import { loadOrCreateSigningKey } from '../lib/keys.ts';
import { buildUsageDeps } from './platform/usage.deps.ts';
import { ResponseCache } from './platform/response-cache.ts';

export const SERVED_DOMAINS = ['registry', 'fmcsa', 'quotes', 'transcripts'];

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** Opens one reader per served domain (a domain with no snapshot yet answers 503 until one is published). */
export async function openReaders(config: Config, domains = SERVED_DOMAINS, log?: Logger): Promise<Readers> {
  const readers: Readers = {};
  for (const d of domains) {
    readers[d] = await SnapshotReader.open(config.dataDir, d, {
      poolSize: config.READ_POOL_SIZE,
      pollMs: config.SNAPSHOT_POLL_MS,
      memoryLimit: '512MB',
      log,
    });
  }
  return readers;
}

/**
 * The state store: PostgreSQL when DATABASE_URL is set (every process writes;
 * migrations applied here), else the embedded DuckDB file, claimed, not just
 * opened: a second API process on the same DATA_DIR serves without it (503
 * for the state-backed endpoints) and takes it over when the owner stops.
 */
async function openState(config: Config, log: Logger, deps: Partial<ServiceDeps>): Promise<StateClaim> {
  if (config.DATABASE_URL) {
    // The server cancels what outlives a request's deadline (state.deadline.ts): statement_timeout = lock_timeout = it.
    const store = await PgStateStore.open(config.DATABASE_URL, { statementTimeoutMs: config.STATE_DEADLINE_MS });
    log.info({ backend: 'postgres' }, 'state store: PostgreSQL (DATABASE_URL), migrations applied');
    return { store, heldBy: null, close: () => store.close() };
  }
  return claimStateStore(stateDbPath(config.dataDir), {
    retryMs: config.STATE_CLAIM_RETRY_MS,
    log,
    onAcquired: (store) => (deps.state = withRequestDeadlines(store, config)),
  });
}

function withRequestDeadlines(store: StateStore, config: Config): StateStore {
  return new DeadlineStateStore(store, { timeoutMs: config.STATE_DEADLINE_MS });
}

/** The services' dependencies. */
export async function buildDeps(config: Config, log: Logger): Promise<ServiceDeps & { stateClaim: StateClaim }> {
  const deps: Partial<ServiceDeps> = {};
  const stateClaim = await openState(config, log, deps);
  return Object.assign(deps, {
    stateClaim,
    readers: await openReaders(config, SERVED_DOMAINS, log),
    log,
    responseCache: new ResponseCache({ maxEntries: config.RESPONSE_CACHE_ENTRIES }),
    now: () => new Date(),
    startedAt: new Date(),
    options: {
      publicBaseUrl: config.publicBaseUrl,
      snapshotStaleHours: config.SNAPSHOT_STALE_HOURS,
      version: pkg.version,
      dataDir: config.dataDir,
      mcpAllowedOrigins: config.mcpAllowedOrigins,
      adminToken: config.ADMIN_TOKEN,
      ...discoveryOptions(config),
    },
    // Requests reach the store under a deadline and a circuit breaker (state.deadline.ts); jobs use stateClaim.store.
    state: stateClaim.store ? withRequestDeadlines(stateClaim.store, config) : undefined,
    stateHeldBy: () => stateClaim.heldBy,
    signingKey: await loadOrCreateSigningKey(config.signingKeyPath),
    liveRefresher: createLiveRefresher(config),
    ...(await buildUsageDeps(config, log, stateClaim.store)), // usage metering, limits, query log + Redis probe (service/usage)
    queueDashboard:
      config.REDIS_URL && config.ADMIN_TOKEN
        ? (await import('./admin/queue-dashboard.ts')).createQueueDashboard(config, config.ADMIN_TOKEN, SERVED_DOMAINS)
        : undefined,
  });
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Work the composition root attaches to the built deps before listening (the
 * monitoring job runner, jobs/cli/start.ts: service/ never imports jobs/);
 * what it returns is closed with the server.
 */
export type AttachToDeps = (deps: ServiceDeps, config: Config, log: Logger) => Promise<{ close(): Promise<void> } | undefined>;

/** Serves the API until closed; resolves once listening. */
export async function startServer(config: Config, log: Logger, attach?: AttachToDeps): Promise<RunningServer> {
  const deps = await buildDeps(config, log);
  const app = createApp(deps);
  const attached = attach ? await attach(deps, config, log) : undefined;
  const t0 = Date.now();
  await Promise.all(deps.warmups ?? []);
  if (deps.warmups?.length) log.info({ ms: Date.now() - t0 }, 'warm-up done (search indexes)');
  if (config.WARMUP_MS > 0) {
    const plan = planWarmupRequests(await loadWarmupKeys(deps.readers, log));
    const report = await warmUpApp(app, plan, { budgetMs: config.WARMUP_MS, passes: 2, concurrency: config.READ_POOL_SIZE, log });
    log.info(report, 'warm-up done (routes)');
    // Each later snapshot is warmed the same way before it is swapped in (no client request is the first on it).
    warmEachSnapshotBeforeSwap(app, deps.readers, { budgetMs: config.WARMUP_MS, concurrency: config.READ_POOL_SIZE, log });
    // Before the socket opens: a client connecting during the collection (~135 ms at full scale) would wait for it.
    log.info({ ms: collectStartupGarbage() }, 'start-up garbage collected');
  }
  // node:http with the API layer's hot path in front of h3 (service/platform/node-listener.ts), under deliberate
  // timeouts (docs/limits.md): a slow sender holds its memory for at most HTTP_REQUEST_TIMEOUT_MS, not node's 300 s.
  const server = createServer(serverTimeouts(config.HTTP_REQUEST_TIMEOUT_MS, config.HTTP_HEADERS_TIMEOUT_MS));
  const connections = new ConnectionTracker(server);
  server.on('request', connections.wrap(createNodeListener(app, deps.apiLayer, log)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Backlog 4096 (the kernel caps it at net.core.somaxconn): a burst of thousands of connects is queued for accept
    // instead of overflowing node's default 511, where a client may believe it connected and the server never see it.
    server.listen({ port: config.PORT, host: config.HOST, backlog: 4096 }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.HOST.includes(':')
    ? `[${config.HOST}]`
    : config.HOST === '0.0.0.0' || config.HOST === '::'
      ? 'localhost'
      : config.HOST;
  const url = `http://${host}:${port}`;
  // With PORT=0 the real port is known only now; links use it unless PUBLIC_BASE_URL is set.
  if (!config.PUBLIC_BASE_URL) deps.options.publicBaseUrl = url;
  // The socket path (node listener, hot path, ETag and compression) is warmed with a few unmetered requests over
  // loopback, before the server reports it is listening.
  if (config.WARMUP_MS > 0) await warmUpListener(`http://127.0.0.1:${port}`, Math.min(config.WARMUP_MS, 5_000), log);
  return {
    url,
    async close() {
      // Stops accepting, closes idle sockets now and each busy one after its current answer (Connection: close),
      // resolves once in-flight requests have finished (ConnectionTracker).
      await connections.drain();
      await attached?.close();
      for (const r of Object.values(deps.readers)) await r.close();
      await deps.stateClaim.close();
      await deps.usage?.close();
      await deps.queueDashboard?.close();
    },
  };
}

/** The server process: configuration from the environment, serve until SIGTERM/SIGINT, then drain. */
export async function runServerMain(attach?: AttachToDeps): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  const log = createLogger(config.LOG_LEVEL);
  const s = await startServer(config, log, attach);
  console.log(`Proofline API listening on ${s.url}`);
  const stop = async () => {
    // Drain: stop accepting, let in-flight requests finish (idle keep-alives close), bounded by 30 s.
    log.info('SIGTERM: draining in-flight requests');
    setTimeout(() => process.exit(1), 30_000).unref();
    await s.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (import.meta.url === `file://${process.argv[1]}`) await runServerMain();
