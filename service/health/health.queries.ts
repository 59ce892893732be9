/**
 * Service health and readiness (issue 21 item 4, issue 25 item 1).
 *
 * - Liveness (`GET /api/health`): always answers 200 while the process can
 *   answer, with `status` healthy or degraded and the reasons. Each dependency
 *   probe runs in parallel under its own deadline (PROBE_DEADLINE_MS), so the
 *   answer never waits longer than that on a dependency; a probe that misses
 *   it is reported `slow`, one that fails `down`.
 * - Readiness (`GET /api/ready`): 503 until every served domain has a
 *   snapshot open and the state store is owned and answers within the
 *   deadline; 200 afterwards. A hung Redis does not make the service unready
 *   (metering fails open), it makes it degraded.
 *
 * Neither route is metered (api-middleware.ts, UNMETERED_PATHS): a probe every
 * few seconds must never exhaust a client's hourly limit.
 */
import { withMembers } from '../../lib/objects.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import type { BreakerReport } from '../platform/deadline.ts';
import type { QueryLogReport } from '../platform/usage.service.ts';

/** How long health waits on any one dependency probe. */
export const PROBE_DEADLINE_MS = 500;

/** How long a state-store call that missed its deadline keeps health `degraded` (the store `slow`) after it. */
export const STATE_MISS_WINDOW_MS = 10_000;

export type DependencyStatus = 'up' | 'down' | 'slow';

export interface Health {
  status: 'healthy' | 'degraded';
  uptime_seconds: number;
  timestamp: string;
  version: string;
  /**
   * Spec 000 `db` (a string): `ok` when every served domain has a snapshot younger than the staleness limit,
   * `stale` when one is older, `no_snapshot` when one has none yet (the worst wins), `none` when no domain is served.
   * The per-domain detail is in `db_detail`.
   */
  db: 'ok' | 'stale' | 'no_snapshot' | 'none';
  db_detail: Record<string, { snapshot_id: string | null; published_at: string | null; age_hours: number | null; stale: boolean }>;
  dependencies: Record<string, DependencyStatus>;
  /** Per dependency with a request-path deadline: its circuit breaker and how many requests failed open (issue 25). */
  dependency_detail: Record<string, Partial<BreakerReport> & { probe_ms?: number; counted_in_memory?: number }>;
  /** Where the durable state lives: `duckdb` (embedded file), `postgres` (DATABASE_URL; also under dependencies), or null. */
  state_backend: 'duckdb' | 'postgres' | null;
  /**
   * The query log behind rankings and stats: rows not yet written (kept in memory while PostgreSQL is down, up to
   * `max_unsent_rows`), rows dropped at that bound (the newest), rows written by this process. Absent without metering.
   */
  query_log?: QueryLogReport;
  reasons: string[];
}

/** Runs `probe` under the deadline: up, down (false or rejected) or slow (no answer in time), with its duration. */
async function probeWithDeadline(probe: () => Promise<boolean>): Promise<{ status: DependencyStatus; ms: number }> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const status = await Promise.race([
    probe().then(
      (ok): DependencyStatus => (ok ? 'up' : 'down'),
      (): DependencyStatus => 'down',
    ),
    new Promise<DependencyStatus>((r) => {
      timer = setTimeout(() => r('slow'), PROBE_DEADLINE_MS);
      timer.unref?.();
    }),
  ]);
  clearTimeout(timer);
  return { status, ms: Math.round(performance.now() - t0) };
}

type ProbeResult = { status: DependencyStatus; ms: number; detail?: string };

/** Probes in flight per app (its deps) and dependency name. */
const inFlight = new WeakMap<ServiceDeps, Map<string, Promise<ProbeResult>>>();

/**
 * Runs the named probe, or joins the one already in flight for it: health and readiness requests that overlap share
 * one probe, and its answer is at most one deadline old. A probe that settled is never reused, so each later request
 * probes afresh (a monitor polling every few seconds sees every change). Without this, N concurrent probes meant N
 * state-store queries queued on the same connection pool, each waiting behind the others.
 */
function sharedProbe(deps: ServiceDeps, name: string, run: () => Promise<ProbeResult>): Promise<ProbeResult> {
  let mine = inFlight.get(deps);
  if (!mine) inFlight.set(deps, (mine = new Map()));
  const running = mine.get(name);
  if (running) return running;
  const p = run().finally(() => mine.delete(name));
  mine.set(name, p);
  return p;
}

/** Whether the state store answers a trivial query within the deadline (null: this process does not own one). */
async function probeState(deps: ServiceDeps): Promise<ProbeResult | null> {
  const store = deps.state;
  if (!store) return null;
  // Straight to the store (not through its request-path breaker, state.deadline.ts): the probe has its own deadline.
  return sharedProbe(deps, 'state', () =>
    probeWithDeadline(async () => (store.probe ? store.probe() : (await store.query('SELECT 1 AS ok')).length === 1)),
  );
}

export async function getHealth(deps: ServiceDeps): Promise<Health> {
  const now = deps.now();
  const reasons: string[] = [];
  const db: Health['db_detail'] = {};
  let dbState: Health['db'] = Object.keys(deps.readers).length ? 'ok' : 'none';
  for (const [domain, reader] of Object.entries(deps.readers)) {
    const m = reader.manifest;
    const age = m ? (now.getTime() - Date.parse(m.published_at)) / 3600_000 : null;
    const stale = age === null || age > deps.options.snapshotStaleHours;
    if (!m) {
      reasons.push(`${domain}: no snapshot published yet`);
      dbState = 'no_snapshot';
    } else if (stale) {
      if (dbState !== 'no_snapshot') dbState = 'stale';
      reasons.push(`${domain}: snapshot is ${age!.toFixed(1)} hours old (limit ${deps.options.snapshotStaleHours})`);
    }
    db[domain] = {
      snapshot_id: m?.snapshot_id ?? null,
      published_at: m?.published_at ?? null,
      age_hours: age === null ? null : Math.round(age * 100) / 100,
      stale,
    };
  }
  const dependencies: Health['dependencies'] = {};
  const detail: Health['dependency_detail'] = {};
  const probes = Object.entries(deps.probes ?? {});
  const [results, state] = await Promise.all([
    Promise.all(probes.map(async ([name, probe]) => [name, await sharedProbe(deps, name, () => probeWithDeadline(probe))] as const)),
    probeState(deps),
  ]);
  const breakers: Record<string, BreakerReport & { counted_in_memory?: number }> = withMembers(deps.usage?.dependencyReport() ?? {});
  const qc = deps.liveRefresher?.breaker?.report();
  if (qc) breakers.qcmobile = qc;
  for (const [name, r] of results) {
    dependencies[name] = r.status;
    detail[name] = withMembers(breakers[name], { probe_ms: r.ms });
    if (r.status === 'slow') reasons.push(`${name} is slow: no answer within ${PROBE_DEADLINE_MS} ms (requests count in memory meanwhile)`);
    else if (r.status === 'down') reasons.push(`${name} is down`);
  }
  for (const [name, b] of Object.entries(breakers)) {
    detail[name] ??= { ...b };
    if (b.state !== 'closed' && (dependencies[name] === 'up' || dependencies[name] === undefined))
      reasons.push(`${name} missed its ${b.timeout_ms} ms deadline recently (circuit ${b.state}): ${b.last_failure}`);
  }
  const stateBreaker = deps.state?.breaker?.report();
  if (state) {
    // A store that answers the probe but missed a request's deadline within STATE_MISS_WINDOW_MS (or whose breaker is
    // not closed) is slow too: a writer stuck behind a lock or a hung commit does not block the probe's read.
    const missed =
      !!stateBreaker &&
      (stateBreaker.state !== 'closed' ||
        stateBreaker.consecutive_failures > 0 ||
        (stateBreaker.last_failure_at !== null && Date.now() - Date.parse(stateBreaker.last_failure_at) < STATE_MISS_WINDOW_MS));
    dependencies.state = state.status === 'up' && missed ? 'slow' : state.status;
    detail.state = withMembers(stateBreaker ?? {}, { probe_ms: state.ms });
    if (state.status !== 'up')
      reasons.push(`state store is ${state.status}: no answer within ${PROBE_DEADLINE_MS} ms; vetting, care and credits may answer 503`);
    if (missed)
      reasons.push(
        `state store missed its ${stateBreaker.timeout_ms} ms deadline at ${stateBreaker.last_failure_at} (circuit ${stateBreaker.state}): state-backed requests may answer 503 (${stateBreaker.last_failure})`,
      );
  }
  const store = deps.state;
  if (store?.backend === 'postgres') {
    // Every node writes to PostgreSQL: while it is down, state-backed writes answer 503 with Retry-After.
    // Probed under the same deadline as every other dependency (issue 25).
    const r = await sharedProbe(deps, 'postgres', async () => {
      let detailText = '';
      const probed = await probeWithDeadline(async () => {
        const h = await store.health();
        detailText = h.detail ?? '';
        return h.up;
      });
      return withMembers(probed, { detail: detailText });
    });
    dependencies.postgres = r.status;
    detail.postgres = { probe_ms: r.ms };
    if (r.status !== 'up')
      reasons.push(`postgres (state database) is ${r.status}: vetting, care, credits and receipts answer 503 (${r.detail ?? ''})`);
  }
  const heldBy = deps.state ? null : deps.stateHeldBy?.();
  if (heldBy) {
    dependencies.state = 'down';
    reasons.push(`state store owned by another process on this DATA_DIR (${heldBy}): vetting, care and credits answer 503 here`);
  }
  return {
    status: reasons.length ? 'degraded' : 'healthy',
    uptime_seconds: Math.round((now.getTime() - deps.startedAt.getTime()) / 1000),
    timestamp: now.toISOString(),
    version: deps.options.version,
    db: dbState,
    db_detail: db,
    dependencies,
    dependency_detail: detail,
    state_backend: deps.state?.backend ?? null,
    ...(deps.usage ? { query_log: deps.usage.queryLogReport() } : {}),
    reasons,
  };
}

export interface Readiness {
  ready: boolean;
  snapshots: Record<string, boolean>;
  state_store: DependencyStatus | 'not_owned' | 'not_configured';
  reasons: string[];
}

/** Readiness: every served domain has a snapshot open, and the state store is owned here and answers in time. */
export async function getReadiness(deps: ServiceDeps): Promise<Readiness> {
  const reasons: string[] = [];
  const snapshots: Record<string, boolean> = {};
  for (const [domain, reader] of Object.entries(deps.readers)) {
    snapshots[domain] = reader.manifest !== null && reader.manifest !== undefined;
    if (!snapshots[domain]) reasons.push(`${domain}: no snapshot open yet`);
  }
  const probed = (await probeState(deps))?.status;
  const state_store: Readiness['state_store'] = probed ?? (deps.stateHeldBy?.() ? 'not_owned' : 'not_configured');
  if (state_store !== 'up') reasons.push(`state store ${state_store.replace('_', ' ')}`);
  return { ready: reasons.length === 0, snapshots, state_store, reasons };
}
