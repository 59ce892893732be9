/**
 * Service health: `healthy` when every domain has a fresh snapshot and every
 * configured dependency answers; `degraded` with reasons otherwise.
 */
import type { ServiceDeps } from '../platform/deps.ts';

export interface Health {
  status: 'healthy' | 'degraded';
  uptime_seconds: number;
  timestamp: string;
  version: string;
  db: Record<string, { snapshot_id: string | null; published_at: string | null; age_hours: number | null; stale: boolean }>;
  dependencies: Record<string, 'up' | 'down'>;
  /** Where the durable state lives: `duckdb` (embedded file), `postgres` (DATABASE_URL; also under dependencies), or null. */
  state_backend: 'duckdb' | 'postgres' | null;
  reasons: string[];
}

export async function getHealth(deps: ServiceDeps): Promise<Health> {
  const now = deps.now();
  const reasons: string[] = [];
  const db: Health['db'] = {};
  for (const [domain, reader] of Object.entries(deps.readers)) {
    const m = reader.manifest;
    const age = m ? (now.getTime() - Date.parse(m.published_at)) / 3600_000 : null;
    const stale = age === null || age > deps.options.snapshotStaleHours;
    if (!m) reasons.push(`${domain}: no snapshot published yet`);
    else if (stale) reasons.push(`${domain}: snapshot is ${age!.toFixed(1)} hours old (limit ${deps.options.snapshotStaleHours})`);
    db[domain] = {
      snapshot_id: m?.snapshot_id ?? null,
      published_at: m?.published_at ?? null,
      age_hours: age === null ? null : Math.round(age * 100) / 100,
      stale,
    };
  }
  const dependencies: Health['dependencies'] = {};
  for (const [name, probe] of Object.entries(deps.probes ?? {})) {
    const up = await Promise.race([probe().catch(() => false), new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref())]);
    dependencies[name] = up ? 'up' : 'down';
    if (!up) reasons.push(`${name} is down`);
  }
  if (deps.state?.backend === 'postgres') {
    // Every node writes to PostgreSQL: while it is down, state-backed writes answer 503 with Retry-After.
    const h = await deps.state.health();
    dependencies.postgres = h.up ? 'up' : 'down';
    if (!h.up) reasons.push(`postgres (state database) is down: vetting, care, credits and receipts answer 503 (${h.detail})`);
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
    db,
    dependencies,
    state_backend: deps.state?.backend ?? null,
    reasons,
  };
}
