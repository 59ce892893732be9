/**
 * Signed webhooks under the Standard Webhooks conventions
 * (https://www.standardwebhooks.com/, the `standardwebhooks` package): each
 * POST carries `webhook-id` (the message id, the same on every attempt),
 * `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the endpoint's
 * `whsec_` secret). Receivers verify with the same package (docs/monitoring.md).
 *
 * An event becomes one message and one delivery per subscribed endpoint, all
 * stored in the state store before any is sent; the deliveries are jobs
 * (jobs/monitoring/: exponential backoff over 24 hours). Every attempt is
 * logged (status, latency, error). A delivery still failing at its last
 * attempt is given up and its endpoint disabled with the reason; an account
 * re-enables it and redelivers by hand. Receiver URLs go through the discovery
 * agent's private-address guard (lib/discovery/fetch.ts) when registered and
 * again when connecting.
 */
import { withMembers } from '../../lib/objects.ts';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { assertFetchableTarget, DiscoveryFetchError, fetchGuarded } from '../../lib/discovery/fetch.ts';
import { InvalidInputError, NotFoundError } from '../../lib/errors.ts';
import { hashCanonical } from '../../lib/hash.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import type { MonitoringJobs } from '../platform/deps.ts';
import { bindFor, loadDialectSql } from '../platform/named-params.ts';
import { decodeKeyCursor, decodeSeqCursor, encodeKeyCursor } from '../platform/pagination.ts';
import { insertRowsSql, queryCommitted, updateRowsSql, type StateStore } from '../platform/state.store.ts';
import type { ChangeEvent } from './changes.queries.ts';

const SQL = {
  // Messages and deliveries are idempotent: a row whose key exists is skipped (an event emitted twice is stored once).
  insertMessage: loadDialectSql('./insert-message.sql', import.meta.url),
  insertDelivery: loadDialectSql('./insert-delivery.sql', import.meta.url),
  insertEndpoint: loadDialectSql('./insert-endpoint.sql', import.meta.url),
  listEndpoints: loadDialectSql('./list-endpoints.sql', import.meta.url),
  setEndpointStatus: loadDialectSql('./set-endpoint-status.sql', import.meta.url),
  deleteEndpoint: loadDialectSql('./delete-endpoint.sql', import.meta.url),
  subscribed: loadDialectSql('./subscribed-endpoints.sql', import.meta.url),
  deliveriesOf: loadDialectSql('./deliveries-of-message.sql', import.meta.url),
  getDelivery: loadDialectSql('./get-delivery.sql', import.meta.url),
  getDeliveries: loadDialectSql('./get-deliveries.sql', import.meta.url),
  getMessage: loadDialectSql('./get-message.sql', import.meta.url),
  updateDelivery: loadDialectSql('./update-delivery.sql', import.meta.url),
  endpointHealth: loadDialectSql('./update-endpoint-health.sql', import.meta.url),
  listDeliveries: loadDialectSql('./list-deliveries.sql', import.meta.url),
  listAttempts: loadDialectSql('./list-attempts.sql', import.meta.url),
  pending: loadDialectSql('./pending-deliveries.sql', import.meta.url),
  watchersOf: loadDialectSql('./watchers-of.sql', import.meta.url),
  failures: loadDialectSql('./endpoint-failures.sql', import.meta.url),
  deliveryState: loadDialectSql('./delivery-state.sql', import.meta.url),
  documentAccount: loadDialectSql('./document-account.sql', import.meta.url),
};

// Batched writes (tx.defer: one statement per table and group commit).
const INSERT_ATTEMPTS = insertRowsSql('webhook_attempts', {
  delivery_id: 'VARCHAR',
  attempt: 'INTEGER',
  started_at: 'VARCHAR',
  status_code: 'INTEGER',
  latency_ms: 'INTEGER',
  error: 'VARCHAR',
});
const UPDATE_DELIVERIES = updateRowsSql('webhook_deliveries', 'delivery_id', {
  delivery_id: 'VARCHAR',
  status: 'VARCHAR',
  attempts: 'INTEGER',
  last_error: 'VARCHAR',
  updated_at: 'VARCHAR',
});

/** Event types an endpoint may subscribe to. `run.*` are operator events (registering them needs the admin token). */
export const EVENT_TYPES = ['carrier.changed', 'care.event', 'run.published', 'run.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const OPERATOR_EVENT_TYPES: readonly EventType[] = ['run.published', 'run.failed'];
/** The account owning operator endpoints (run notifications). */
export const OPERATOR_ACCOUNT = 'operator';

export const endpointInput = z.object({
  url: z.string().max(2000).describe('https URL of the receiver (private, loopback and link-local addresses are refused)'),
  event_types: z
    .array(z.enum(EVENT_TYPES))
    .min(1)
    .describe(`any of ${EVENT_TYPES.join(', ')}`),
  broker_id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .optional(),
});
export type EndpointInput = z.infer<typeof endpointInput>;

export interface WebhookOptions {
  /** Receiver origins exempt from the private-address guard (tests only; ServiceOptions.webhookPrivateOrigins). */
  privateOrigins?: string[];
  /** Per attempt, default 10 s. */
  timeoutMs?: number;
}

function allowsPrivate(url: string, opts: WebhookOptions): boolean {
  try {
    return (opts.privateOrigins ?? []).includes(new URL(url).origin);
  } catch {
    return false;
  }
}

function endpointView(r: Row) {
  return {
    endpoint_id: String(r.endpoint_id),
    account_id: String(r.account_id),
    url: String(r.url),
    event_types: JSON.parse(String(r.event_types_json)) as EventType[],
    status: String(r.status),
    disabled_reason: (r.disabled_reason as string | null) ?? null,
    consecutive_failures: Number(r.consecutive_failures),
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
  };
}

/**
 * Registers an endpoint; the answer carries its `secret` (whsec_..., shown
 * only here). A URL the private-address guard refuses is a 400 naming `url`.
 */
export async function createEndpoint(store: StateStore, accountId: string, input: EndpointInput, now: Date, opts: WebhookOptions = {}) {
  try {
    await assertFetchableTarget(input.url, allowsPrivate(input.url, opts));
  } catch (e) {
    if (e instanceof DiscoveryFetchError)
      throw new InvalidInputError(`invalid field 'url': ${e.message}`, { response: { parameter: 'url' } });
    throw e;
  }
  const id = `WHE-${randomBytes(8).toString('hex')}`;
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const at = now.toISOString();
  const types = [...new Set(input.event_types)];
  await store.write((tx) =>
    tx.write(...bindFor(store, SQL.insertEndpoint, { id, account: accountId, url: input.url, secret, types: JSON.stringify(types), at })),
  );
  return {
    endpoint_id: id,
    account_id: accountId,
    url: input.url,
    event_types: types,
    status: 'active',
    secret,
    created_at: at,
  };
}

/**
 * One page of the account's webhook endpoints, oldest first: `limit` from `cursor`, the opaque keyset cursor of
 * pagination.ts holding the last endpoint's (created_at, endpoint_id), so endpoints added meanwhile (at the tail)
 * or removed never shift a later page.
 */
export async function listEndpoints(store: StateStore, accountId: string, q: { limit?: number; cursor?: string } = {}) {
  const limit = q.limit ?? 100;
  const after = decodeKeyCursor(q.cursor, 2);
  const key = (r: Row) => [String(r.created_at), String(r.endpoint_id)] as const;
  // Ordered here, by code units, as the cursor compares (a PostgreSQL collation may order ids otherwise).
  const cmp = (a: Row, b: Row) => (key(a)[0] < key(b)[0] ? -1 : key(a)[0] > key(b)[0] ? 1 : key(a)[1] < key(b)[1] ? -1 : 1);
  const all = (await queryCommitted(store, ...bindFor(store, SQL.listEndpoints, { account: accountId }))).sort(cmp);
  const rest = after ? all.filter((r) => key(r)[0] > after[0]! || (key(r)[0] === after[0] && key(r)[1] > after[1]!)) : all;
  const page = rest.slice(0, limit);
  return {
    account_id: accountId,
    limit,
    endpoints: page.map(endpointView),
    next_cursor: rest.length > limit ? encodeKeyCursor(key(page[page.length - 1]!)) : null,
  };
}

async function ownEndpoint(store: StateStore, accountId: string, id: string) {
  const e = (await store.query(...bindFor(store, SQL.listEndpoints, { account: accountId }))).find((r) => r.endpoint_id === id);
  if (!e) throw new NotFoundError(`no webhook endpoint ${id} on account ${accountId}`, { response: { parameter: 'id' } });
  return e;
}

/** Re-enables a disabled endpoint (failure count reset). */
export async function enableEndpoint(store: StateStore, accountId: string, id: string, now: Date) {
  await ownEndpoint(store, accountId, id);
  await store.write((tx) =>
    tx.write(...bindFor(store, SQL.setEndpointStatus, { id, account: accountId, status: 'active', reason: null, at: now.toISOString() })),
  );
  return endpointView((await ownEndpoint(store, accountId, id)) as Row);
}

export async function deleteEndpoint(store: StateStore, accountId: string, id: string) {
  await ownEndpoint(store, accountId, id);
  await store.write((tx) => tx.write(...bindFor(store, SQL.deleteEndpoint, { id, account: accountId })));
  return { endpoint_id: id, deleted: true };
}

/**
 * Emits one event: stores its message and one pending delivery per active
 * endpoint of `accounts` subscribed to `type` (idempotent: the same message id
 * and endpoint never make two deliveries), then enqueues the new deliveries.
 * Returns the ids of the deliveries created.
 */
export async function emitEvent(
  store: StateStore,
  jobs: MonitoringJobs | undefined,
  e: { message_id: string; type: EventType; data: unknown; accounts: string[] },
  now: Date,
): Promise<string[]> {
  const at = now.toISOString();
  const payload = JSON.stringify({ type: e.type, timestamp: at, data: e.data });
  let sent = payload;
  const created = await store.write(async (tx) => {
    // One emitter of a message at a time (nodes detecting the same snapshot emit the same messages): no delivery twice.
    await tx.lock(`webhook-message:${e.message_id}`);
    const endpoints = await tx.read(...bindFor(store, SQL.subscribed, { type: e.type, accounts: JSON.stringify(e.accounts) }));
    if (!endpoints.length) return [];
    const existing = new Set(
      (await tx.read(...bindFor(store, SQL.deliveriesOf, { message: e.message_id }))).map((r) => String(r.delivery_id)),
    );
    // An event emitted again (a replayed job) keeps its first payload: the one its earlier deliveries were signed over.
    const stored = (await tx.read(...bindFor(store, SQL.getMessage, { id: e.message_id })))[0];
    if (stored) sent = String(stored.payload_json);
    else
      await tx.write(
        ...bindFor(store, SQL.insertMessage, { message_id: e.message_id, event_type: e.type, payload_json: payload, created_at: at }),
      );
    const ids: string[] = [];
    for (const ep of endpoints) {
      const id = `WHD-${hashCanonical({ message: e.message_id, endpoint: ep.endpoint_id }).slice(0, 24)}`;
      if (existing.has(id)) continue;
      const row = { delivery_id: id, message_id: e.message_id, endpoint_id: String(ep.endpoint_id), account_id: String(ep.account_id) };
      await tx.write(...bindFor(store, SQL.insertDelivery, { ...row, created_at: at }));
      ids.push(id);
    }
    return ids;
  });
  if (created.length) rememberMessage(e.message_id, { event_type: e.type, payload_json: sent });
  for (const id of created) await jobs?.enqueueDelivery(id);
  return created;
}

/** Emits one `carrier.changed` event per change event to the accounts watching that carrier. */
export async function emitCarrierChanges(store: StateStore, jobs: MonitoringJobs | undefined, events: ChangeEvent[], now: Date) {
  if (!events.length) return [];
  const watchers = new Map<number, string[]>();
  for (const r of await store.query(...bindFor(store, SQL.watchersOf, { dots: JSON.stringify(events.map((e) => e.dot_number)) }))) {
    const dot = Number(r.dot_number);
    watchers.set(dot, [...(watchers.get(dot) ?? []), String(r.account_id)]);
  }
  const out: string[] = [];
  for (const ev of events) {
    const accounts = watchers.get(ev.dot_number) ?? [];
    if (accounts.length)
      out.push(...(await emitEvent(store, jobs, { message_id: `msg_${ev.event_id}`, type: 'carrier.changed', data: ev, accounts }, now)));
  }
  return out;
}

/**
 * Reads the deliveries of the attempts in flight in one query per tick
 * (a DuckDB point query costs about as much as a batch of 32: measured in
 * bench/webhooks.bench.ts).
 */
/** Messages never change once stored: the latest ones are kept in memory for their delivery attempts. */
const messageCache = new Map<string, { event_type: string; payload_json: string }>();
function rememberMessage(id: string, m: { event_type: string; payload_json: string }): void {
  messageCache.set(id, m);
  if (messageCache.size > 20_000) messageCache.delete(messageCache.keys().next().value!);
}
async function loadMessage(store: StateStore, id: string) {
  const hit = messageCache.get(id);
  if (hit) return hit;
  const r = (await store.query(...bindFor(store, SQL.getMessage, { id })))[0];
  if (!r) return undefined;
  const m = { event_type: String(r.event_type), payload_json: String(r.payload_json) };
  rememberMessage(id, m);
  return m;
}

type Waiter = { resolve: (r: Row | undefined) => void; reject: (e: unknown) => void };
const batches = new WeakMap<StateStore, Map<string, Waiter[]>>();
function loadDelivery(store: StateStore, id: string): Promise<Row | undefined> {
  return new Promise((resolve, reject) => {
    let batch = batches.get(store);
    if (!batch) {
      const current = new Map<string, Waiter[]>();
      batches.set(store, (batch = current));
      setImmediate(() => {
        batches.delete(store);
        store.query(...bindFor(store, SQL.getDeliveries, { ids: JSON.stringify([...current.keys()]) })).then(
          (rows) => {
            const byId = new Map(rows.map((r) => [String(r.delivery_id), r]));
            for (const [k, ws] of current) for (const w of ws) w.resolve(byId.get(k));
          },
          (e) => {
            for (const ws of current.values()) for (const w of ws) w.reject(e);
          },
        );
      });
    }
    batch.set(id, [...(batch.get(id) ?? []), { resolve, reject }]);
  });
}

/**
 * Emits `care.event` for a custody event appended to a document opened with
 * a vetting: the account that paid for that vetting owns the document.
 * Documents without a vetting have no owner to notify.
 */
export async function emitCareEvent(
  store: StateStore,
  jobs: MonitoringJobs | undefined,
  documentId: string,
  event: { seq: number } & Record<string, unknown>,
  now: Date,
): Promise<string[]> {
  const owner = (await store.query(...bindFor(store, SQL.documentAccount, { id: documentId })))[0];
  if (!owner) return [];
  return emitEvent(
    store,
    jobs,
    {
      message_id: `msg_care_${documentId}_${event.seq}`,
      type: 'care.event',
      data: { document_id: documentId, ...event },
      accounts: [String(owner.account_id)],
    },
    now,
  );
}

export interface AttemptOutcome {
  delivery_id: string;
  /** delivered | pending (retry later) | failed (given up) | skipped (not pending, or its endpoint is gone or disabled). */
  status: 'delivered' | 'pending' | 'failed' | 'skipped';
  attempt?: number;
}

/**
 * Sends one attempt of a delivery and logs it. `last`: the job runner's final
 * attempt (24 h of backoff spent): a failure then gives the delivery up and
 * disables its endpoint with the reason. A 2xx is success; anything else,
 * a timeout or a refused target is a failure.
 */
export async function attemptDelivery(
  store: StateStore,
  deliveryId: string,
  last: boolean,
  now: () => Date,
  opts: WebhookOptions = {},
): Promise<AttemptOutcome> {
  const d = await loadDelivery(store, deliveryId);
  if (d?.status !== 'pending') return { delivery_id: deliveryId, status: 'skipped' };
  const message = await loadMessage(store, String(d.message_id));
  if (!message) return { delivery_id: deliveryId, status: 'skipped' };
  if (d.url == null || d.endpoint_status !== 'active') {
    const reason = d.url == null ? 'endpoint removed' : 'endpoint disabled';
    await store.write((tx) =>
      tx.write(
        ...bindFor(store, SQL.updateDelivery, {
          id: deliveryId,
          status: 'failed',
          attempts: Number(d.attempts),
          error: reason,
          at: now().toISOString(),
        }),
      ),
    );
    return { delivery_id: deliveryId, status: 'skipped' };
  }
  let attempt = Number(d.attempts) + 1;
  const started = now();
  const body = message.payload_json;
  const signature = new Webhook(String(d.secret)).sign(String(d.message_id), started, body);
  const t0 = performance.now();
  let status: number | null = null;
  let error: string | null = null;
  try {
    const res = await fetchGuarded(
      String(d.url),
      { timeoutMs: opts.timeoutMs ?? 10_000, maxBytes: 64 * 1024, maxRedirects: 0, allowPrivate: allowsPrivate(String(d.url), opts) },
      '*/*',
      {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': String(d.message_id),
          'webhook-timestamp': String(Math.floor(started.getTime() / 1000)),
          'webhook-signature': signature,
        },
      },
    );
    status = res.status;
    if (status < 200 || status > 299) error = `HTTP ${status}`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  const ms = Math.round(performance.now() - t0);
  const ok = error === null;
  let outcome: AttemptOutcome['status'] = ok ? 'delivered' : last ? 'failed' : 'pending';
  const at = now().toISOString();
  await store.write(async (tx) => {
    // Several nodes may attempt one delivery (PostgreSQL state: a node that starts re-sends every pending delivery):
    // the attempt number and a delivered status come from the row as committed, read under the delivery's lock.
    const [cur] = await tx.readLocked(`webhook-delivery:${deliveryId}`, [bindFor(store, SQL.deliveryState, { id: deliveryId })]);
    attempt = Number(cur?.[0]?.attempts ?? d.attempts) + 1;
    if (cur?.[0]?.status === 'delivered') outcome = 'delivered';
    tx.defer(INSERT_ATTEMPTS, {
      delivery_id: deliveryId,
      attempt,
      started_at: started.toISOString(),
      status_code: status,
      latency_ms: ms,
      error,
    });
    tx.defer(
      UPDATE_DELIVERIES,
      { delivery_id: deliveryId, status: outcome, attempts: attempt, last_error: error, updated_at: at },
      deliveryId,
    );
    // The endpoint row is written only when its health changes (a success after failures, or a failure).
    if (ok && Number(d.consecutive_failures ?? 0) === 0) return;
    await tx.lock(`webhook-endpoint:${String(d.endpoint_id)}`); // the failure count is read, then written
    const ep = (await tx.read(...bindFor(store, SQL.failures, { id: String(d.endpoint_id) })))[0];
    const failures = ok ? 0 : Number(ep?.consecutive_failures ?? 0) + 1;
    const disable = !ok && last;
    await tx.write(
      ...bindFor(store, SQL.endpointHealth, {
        id: String(d.endpoint_id),
        failures,
        status: disable ? 'disabled' : 'active',
        reason: disable
          ? `delivery ${deliveryId} still failing after ${attempt} attempts over the retry window; last error: ${error}`
          : null,
        at,
      }),
    );
  });
  return { delivery_id: deliveryId, status: outcome, attempt };
}

/** Puts a delivery back to pending and enqueues it (manual redelivery); its attempt log continues. */
export async function redeliver(store: StateStore, jobs: MonitoringJobs | undefined, accountId: string, id: string, now: Date) {
  const d = (await store.query(...bindFor(store, SQL.getDelivery, { id })))[0];
  if (!d || d.account_id !== accountId)
    throw new NotFoundError(`no webhook delivery ${id} on account ${accountId}`, { response: { parameter: 'id' } });
  if (d.url == null) throw new InvalidInputError(`the endpoint of delivery ${id} was removed`, { response: { parameter: 'id' } });
  if (d.endpoint_status !== 'active')
    throw new InvalidInputError(`endpoint ${d.endpoint_id} is disabled (${d.disabled_reason ?? 'no reason'}): enable it first`, {
      response: { parameter: 'id' },
    });
  await store.write((tx) =>
    tx.write(
      ...bindFor(store, SQL.updateDelivery, {
        id,
        status: 'pending',
        attempts: Number(d.attempts),
        error: (d.last_error as string | null) ?? null,
        at: now.toISOString(),
      }),
    ),
  );
  await jobs?.enqueueDelivery(id, `r${Number(d.attempts)}`);
  return { delivery_id: id, status: 'pending', enqueued: Boolean(jobs) };
}

function deliveryView(r: Row) {
  return {
    delivery_id: String(r.delivery_id),
    message_id: String(r.message_id),
    endpoint_id: String(r.endpoint_id),
    event_type: String(r.event_type),
    status: String(r.status),
    attempts: Number(r.attempts),
    last_error: (r.last_error as string | null) ?? null,
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
  };
}

/** One page of the account's deliveries, newest first (`cursor` = next_cursor, the opaque keyset cursor of pagination.ts holding the last sequence number). */
export async function listDeliveries(
  store: StateStore,
  accountId: string,
  q: { limit: number; cursor?: string; endpoint_id?: string; status?: string },
) {
  const before = decodeSeqCursor(q.cursor);
  const rows = await queryCommitted(
    store,
    ...bindFor(store, SQL.listDeliveries, {
      account: accountId,
      before,
      endpoint: q.endpoint_id ?? null,
      status: q.status ?? null,
      limit: q.limit + 1,
    }),
  );
  const page = rows.slice(0, q.limit);
  return {
    account_id: accountId,
    limit: q.limit,
    next_cursor: rows.length > q.limit ? encodeKeyCursor([String(page[page.length - 1]!.seq)]) : null,
    deliveries: page.map(deliveryView),
  };
}

/** One delivery with its payload and every attempt (status, latency, error). */
export async function getDelivery(store: StateStore, accountId: string, id: string) {
  const d = (await store.query(...bindFor(store, SQL.getDelivery, { id })))[0];
  if (!d || d.account_id !== accountId)
    throw new NotFoundError(`no webhook delivery ${id} on account ${accountId}`, { response: { parameter: 'id' } });
  const attemptLog = (await store.query(...bindFor(store, SQL.listAttempts, { id }))).map((a) => ({
    attempt: Number(a.attempt),
    started_at: String(a.started_at),
    status_code: a.status_code == null ? null : Number(a.status_code),
    latency_ms: Number(a.latency_ms),
    error: (a.error as string | null) ?? null,
  }));
  return withMembers(deliveryView(d), { payload: JSON.parse(String(d.payload_json)), attempt_log: attemptLog });
}

/** Deliveries still pending (a delivery runner re-enqueues them when it starts: nothing is lost to a crash). */
export async function listPendingDeliveries(store: StateStore): Promise<string[]> {
  return (await store.query(SQL.pending[store.backend])).map((r) => String(r.delivery_id));
}
