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
  /**
   * Spec 000 `db` (a string): `ok` when every served domain has a snapshot younger than the staleness limit,
   * `stale` when one is older, `no_snapshot` when one has none yet (the worst wins), `none` when no domain is served.
   * The per-domain detail is in `db_detail`.
   */
  db: 'ok' | 'stale' | 'no_snapshot' | 'none';
  db_detail: Record<string, { snapshot_id: string | null; published_at: string | null; age_hours: number | null; stale: boolean }>;
  dependencies: Record<string, 'up' | 'down'>;
  reasons: string[];
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
  for (const [name, probe] of Object.entries(deps.probes ?? {})) {
    const up = await Promise.race([probe().catch(() => false), new Promise<boolean>((r) => setTimeout(() => r(false), 1000).unref())]);
    dependencies[name] = up ? 'up' : 'down';
    if (!up) reasons.push(`${name} is down`);
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
    reasons,
  };
}
