/**
 * Watchlists: the carriers (by USDOT number) an account monitors, and the
 * account's opt-in to add every carrier it vets (POST /api/vet) automatically.
 * Lookups stay free; the size of a watchlist is a plan limit (WATCHLIST_LIMITS,
 * stated in docs/monitoring.md). An account is the credit account of the
 * request's API key, else the broker_id's free account (service/vetting/credits.ts).
 *
 * Every write goes through the state store's writer queue and takes the
 * account's watchlist lock first, so a size check and the insert after it
 * cannot interleave with another request's, on this node or another.
 */
import { withMembers } from '../../lib/objects.ts';
import { z } from 'zod';
import { hashApiKey } from '../../lib/api-keys.ts';
import { InvalidInputError, PaymentRequiredError } from '../../lib/errors.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { getRiskSnapshot } from '../carriers/carriers.queries.ts';
import { bindFor, loadDialectSql, type DialectSql } from '../platform/named-params.ts';
import { decodeSeqCursor, encodeKeyCursor } from '../platform/pagination.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { stateOf } from '../platform/guards.ts';
import { queryCommitted, type StateStore, type StateTx } from '../platform/state.store.ts';

/**
 * The state store monitoring runs on: the service's, embedded DuckDB or PostgreSQL (DATABASE_URL). Monitoring's
 * statements are portable or come in a PostgreSQL variant beside them (`*.postgres.sql`, named-params.ts
 * loadDialectSql); change detection itself compares parquet snapshots in DuckDB on either backend.
 */
export function monitoringStateOf(deps: ServiceDeps): StateStore {
  return stateOf(deps);
}

const SQL = {
  account: loadDialectSql('./account.sql', import.meta.url),
  accountByKey: loadDialectSql('./account-by-key.sql', import.meta.url),
  list: loadDialectSql('./list-watchlist.sql', import.meta.url),
  insert: loadDialectSql('./insert-watch.sql', import.meta.url),
  remove: loadDialectSql('./delete-watch.sql', import.meta.url),
  settings: loadDialectSql('./upsert-settings.sql', import.meta.url),
  among: loadDialectSql('./watched-among.sql', import.meta.url),
};

/**
 * The lock of one account's watchlist (state.types.ts `lock`): taken before its size is read, so a size check and
 * the inserts after it are never interleaved with another node's (PostgreSQL); free on the embedded store.
 */
const watchlistLock = (accountId: string) => `watchlist:${accountId}`;

/** Largest watchlist per plan (the plan ids of service/vetting/credits.ts PLANS). Documented in docs/monitoring.md. */
export const WATCHLIST_LIMITS: Record<string, number> = {
  free: 25,
  payg: 500,
  pack_100: 500,
  pack_500: 2_500,
  enterprise: 100_000,
};

export const dotSchema = z
  .union([
    z.number().int(),
    z
      .string()
      .regex(/^\d{1,8}$/, 'must be a USDOT number')
      .transform(Number),
  ])
  .refine((d) => d > 0 && d < 100_000_000, 'must be a positive USDOT number');
export const brokerIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (1-64)')
  .describe('the broker whose free account runs the request when no API key is given');

export const watchInput = z.object({ dot_numbers: z.array(dotSchema).min(1).max(1000), broker_id: brokerIdSchema.optional() });
export const settingsInput = z.object({ auto_watch: z.boolean(), broker_id: brokerIdSchema.optional() });

/** Who a monitoring request runs as: the API key's account, else the broker's free account. */
export interface MonitoringAuth {
  apiKey?: string | null;
  brokerId?: string | null;
}

/** The account id of a request; 400 naming broker_id when there is neither a key nor a broker. */
export async function resolveMonitoringAccount(store: StateStore, auth: MonitoringAuth): Promise<string> {
  if (auth.apiKey) {
    const rows = await queryCommitted(store, ...bindFor(store, SQL.accountByKey, { h: hashApiKey(auth.apiKey) }));
    if (rows[0]) return String(rows[0].account_id);
  }
  if (auth.brokerId) return `broker:${auth.brokerId}`;
  throw new InvalidInputError('give an API key (Authorization: Bearer plc_...) or broker_id', { response: { parameter: 'broker_id' } });
}

interface AccountView {
  plan: string;
  auto_watch: boolean;
  watched: number;
  limit: number;
}

async function readAccountView(read: (sql: DialectSql, p: Record<string, string>) => Promise<Record<string, unknown>[]>, id: string) {
  const r = (await read(SQL.account, { id }))[0] ?? {};
  const plan = (r.plan as string | null) ?? 'free';
  return {
    plan,
    auto_watch: r.auto_watch === true,
    watched: Number(r.watched ?? 0),
    limit: WATCHLIST_LIMITS[plan] ?? WATCHLIST_LIMITS.free!,
  } satisfies AccountView;
}

/**
 * Adds carriers to the account's watchlist. Already watched DOTs are no-ops.
 * 402 naming the plan limit when the new size would exceed it (nothing added).
 */
export async function addToWatchlist(store: StateStore, accountId: string, dots: number[], by: string, now: Date) {
  const unique = [...new Set(dots)];
  return store.write(async (tx) => {
    await tx.lock(watchlistLock(accountId));
    const view = await readAccountView((s, p) => tx.read(...bindFor(store, s, p)), accountId);
    const present = new Set(
      (
        await tx.read(
          ...bindFor(store, SQL.among, {
            id: accountId,
            dots: JSON.stringify(unique),
          }),
        )
      ).map((r) => Number(r.dot_number)),
    );
    const fresh = unique.filter((d) => !present.has(d));
    if (view.watched + fresh.length > view.limit)
      throw new PaymentRequiredError(
        `watchlist limit of the ${view.plan} plan is ${view.limit} carriers; ${view.watched} watched, ${fresh.length} more requested`,
        {
          response: {
            parameter: 'dot_numbers',
            plan: view.plan,
            watchlist_limit: view.limit,
            watched: view.watched,
            requested: fresh.length,
          },
        },
      );
    const at = now.toISOString();
    for (const dot of fresh) await tx.write(...bindFor(store, SQL.insert, { id: accountId, dot, at, by }));
    return {
      account_id: accountId,
      added: fresh,
      already_watched: unique.filter((d) => present.has(d)),
      watched: view.watched + fresh.length,
      limit: view.limit,
    };
  });
}

/** Removes carriers from the watchlist; DOTs not on it are reported, not an error. */
export async function removeFromWatchlist(store: StateStore, accountId: string, dots: number[]) {
  const unique = [...new Set(dots)];
  return store.write(async (tx) => {
    await tx.lock(watchlistLock(accountId));
    const present = new Set(
      (
        await tx.read(
          ...bindFor(store, SQL.among, {
            id: accountId,
            dots: JSON.stringify(unique),
          }),
        )
      ).map((r) => Number(r.dot_number)),
    );
    for (const dot of unique) if (present.has(dot)) await tx.write(...bindFor(store, SQL.remove, { id: accountId, dot }));
    return { account_id: accountId, removed: unique.filter((d) => present.has(d)), not_watched: unique.filter((d) => !present.has(d)) };
  });
}

/** Sets the account's auto_watch opt-in (POST /api/vet adds the vetted carrier). */
export async function setMonitoringSettings(store: StateStore, accountId: string, autoWatch: boolean, now: Date) {
  await store.write((tx) => tx.write(...bindFor(store, SQL.settings, { id: accountId, auto_watch: autoWatch, at: now.toISOString() })));
  return getMonitoringSettings(store, accountId);
}

/** The account's plan, watchlist size and limit, and auto_watch. */
export async function getMonitoringSettings(store: StateStore, accountId: string) {
  const v = await readAccountView((s, p) => queryCommitted(store, ...bindFor(store, s, p)), accountId);
  return { account_id: accountId, plan: v.plan, auto_watch: v.auto_watch, watched: v.watched, watchlist_limit: v.limit };
}

/**
 * After a vetting: adds the carrier when the account opted in to auto_watch
 * and the plan limit allows. Returns whether it is now watched because of
 * this call (false when not opted in, already watched or at the limit).
 */
export async function autoWatchVetted(store: StateStore, accountId: string, dot: number, now: Date): Promise<boolean> {
  return store.write(async (tx: StateTx) => {
    await tx.lock(watchlistLock(accountId));
    const view = await readAccountView((s, p) => tx.read(...bindFor(store, s, p)), accountId);
    if (!view.auto_watch || view.watched >= view.limit) return false;
    const has = await tx.read(...bindFor(store, SQL.among, { id: accountId, dots: JSON.stringify([dot]) }));
    if (has.length) return false;
    await tx.write(...bindFor(store, SQL.insert, { id: accountId, dot, at: now.toISOString(), by: 'auto_vet' }));
    return true;
  });
}

/**
 * One page of the watchlist, ordered by DOT (`cursor` = next_cursor: the opaque keyset cursor of pagination.ts
 * holding the last DOT of the previous page), each carrier with its state in the served FMCSA snapshot
 * (null when the snapshot lacks it or none is served) and its last change event.
 */
export async function listWatchlist(
  store: StateStore,
  fmcsa: SnapshotReader | undefined,
  accountId: string,
  limit: number,
  cursor?: string,
) {
  const after = decodeSeqCursor(cursor) ?? 0;
  const rows = await queryCommitted(store, ...bindFor(store, SQL.list, { id: accountId, after, limit: limit + 1 }));
  const page = rows.slice(0, limit);
  const carriers = [];
  for (const r of page) {
    const dot = Number(r.dot_number);
    carriers.push({
      dot_number: dot,
      added_at: r.added_at,
      added_by: r.added_by,
      state: fmcsa ? await currentState(fmcsa, dot) : null,
      last_change: r.last_event_id
        ? {
            event_id: r.last_event_id,
            kinds: JSON.parse(String(r.last_kinds_json)),
            snapshot_id: r.last_next_snapshot_id,
            detected_at: r.last_detected_at,
          }
        : null,
    });
  }
  const settings = await getMonitoringSettings(store, accountId);
  return withMembers(settings, {
    limit,
    next_cursor: rows.length > limit ? encodeKeyCursor([String(page[page.length - 1]!.dot_number)]) : null,
    carriers,
  });
}

/** The carrier's last known state: its row in the served FMCSA snapshot, or null. */
async function currentState(fmcsa: SnapshotReader, dot: number) {
  try {
    const s = await getRiskSnapshot(fmcsa, dot);
    return {
      snapshot_id: s.snapshot_id,
      as_of: s.as_of,
      legal_name: s.features.legal_name,
      authority_status: s.features.authority_status,
      oos_orders_active: s.features.oos_orders_active,
      risk_score: s.assessment.risk_score,
      risk_level: s.assessment.risk_level,
      recommendation: s.assessment.recommendation,
      red_flags: s.assessment.red_flags.map((f) => f.code),
      origin: s.origin,
    };
  } catch {
    return null;
  }
}
