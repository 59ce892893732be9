/**
 * Chaos: a state store that stops answering (issue 25 item 1). Every
 * state-store call on the request path has a deadline and a circuit breaker
 * (service/platform/state.deadline.ts): past the deadline a write answers 503
 * with Retry-After and says its outcome is unknown, /api/health says the
 * store is slow (degraded) within its own deadline, and the retried POST with
 * the same Idempotency-Key gets the first answer once the store is back:
 * exactly one record, exactly one credit spent, also when the timed-out write
 * committed after its answer.
 *
 * Embedded DuckDB: a store injected through deps whose writes hang until the
 * test lets them go (then they commit). PostgreSQL: another session holds the
 * document's advisory lock, as a stuck writer on another node would.
 */
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import { InvalidInputError, SourceUnavailableError } from '../../lib/errors.ts';
import { DeadlineStateStore, storeBehindDeadlines, watchOutcome } from '../../service/platform/state.deadline.ts';
import { PgStateStore } from '../../service/platform/state.postgres.ts';
import type { SqlParams, StateHealth, StateStore, StateTx } from '../../service/platform/state.types.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { freshDatabase, HAS_POSTGRES } from '../helpers/postgres.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';

// Generous: a claim or commit on a loaded CI machine must not miss it by accident (the test would then see another path).
const DEADLINE_MS = 1000;

/** A real store whose writes can be made to hang (after letting `after` more through) until `resume()`. */
class HangingStore implements StateStore {
  private gate: Promise<void> | null = null;
  private letGo: () => void = () => undefined;
  private passes = 0;
  constructor(readonly inner: StateStore) {}
  get backend() {
    return this.inner.backend;
  }
  get stats() {
    return this.inner.stats;
  }
  hangWrites(after = 0): void {
    this.passes = after;
    this.gate = new Promise((r) => (this.letGo = r));
  }
  resume(): void {
    this.gate = null;
    this.letGo();
  }
  write<T>(run: (tx: StateTx) => Promise<T>): Promise<T> {
    const gate = this.gate;
    if (!gate) return this.inner.write(run);
    if (this.passes > 0) {
      this.passes--;
      return this.inner.write(run);
    }
    return gate.then(() => this.inner.write(run));
  }
  query(sql: string, params?: SqlParams): Promise<Row[]> {
    return this.inner.query(sql, params);
  }
  health(): Promise<StateHealth> {
    return this.inner.health();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const withKey = (key: string | null, body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
  body: JSON.stringify(body),
});

/** A request with a generous client-side bound: a hang fails the test instead of stalling it (no timing assertion). */
async function bounded<T>(p: Promise<T>, ms = 10 * DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Retries the POST until the store has settled the first one (409 while it runs, 503 while the breaker is open). */
async function retryUntilAnswered(svc: TestService, path: string, init: RequestInit) {
  for (let i = 0; i < 100; i++) {
    const r = await bounded(getJson(svc.app, path, init));
    if (r.status !== 409 && r.status !== 503) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${path}: still 409/503 after 100 retries`);
}

/** A store whose every call waits for `gate` (then answers `[]`, or runs the write with a stub transaction). */
function gatedStore(): { store: StateStore; open: () => void; calls: () => number } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((r) => (open = r));
  let calls = 0;
  const tx = { read: async () => [], write: async () => undefined, defer: () => undefined } as unknown as StateTx;
  const store: StateStore = {
    backend: 'duckdb',
    stats: { commits: 0, operations: 0 },
    query: async () => {
      calls++;
      await gate;
      return [];
    },
    write: async (run) => {
      calls++;
      await gate;
      return run(tx);
    },
    health: async () => ({ backend: 'duckdb', up: true, detail: null }),
    close: async () => undefined,
  };
  return { store, open: () => open(), calls: () => calls };
}

describe('DeadlineStateStore: the contract of a call past its deadline', () => {
  it('a read past its deadline is a 503 not_written; a write is a 503 unknown; after 3 misses the store is not called', async () => {
    const g = gatedStore();
    const s = new DeadlineStateStore(g.store, { timeoutMs: 30, openMs: 60_000 });
    const read = await s.query('SELECT 1').catch((e: unknown) => e);
    expect(read).toBeInstanceOf(SourceUnavailableError);
    expect((read as SourceUnavailableError).context.response).toMatchObject({ dependency: 'state', outcome: 'not_written' });
    const write = await s.write(async () => 1).catch((e: unknown) => e);
    expect((write as SourceUnavailableError).context.response).toMatchObject({ outcome: 'unknown' });
    expect((write as Error).message).toMatch(/Idempotency-Key/);
    await s.write(async () => 1).catch(() => undefined);
    expect(s.breaker.report()).toMatchObject({ state: 'open', consecutive_failures: 3 });
    const refused = await s.write(async () => 1).catch((e: unknown) => e);
    expect((refused as SourceUnavailableError).context.response).toMatchObject({ outcome: 'not_written' });
    expect(g.calls()).toBe(3); // the open breaker did not call the store
    g.open();
    expect(storeBehindDeadlines(s)).toBe(g.store);
  });

  it("an operation's own error is an answer, not a failure of the store", async () => {
    const g = gatedStore();
    g.open();
    const s = new DeadlineStateStore(g.store, { timeoutMs: 1000 });
    for (let i = 0; i < 5; i++)
      await expect(
        s.write(async () => {
          throw new InvalidInputError('bad');
        }),
      ).rejects.toBeInstanceOf(InvalidInputError);
    expect(s.breaker.report()).toMatchObject({ state: 'closed', consecutive_failures: 0 });
  });

  it('inside watchOutcome a write past its deadline reports the unknown outcome and then resolves with the real result', async () => {
    const g = gatedStore();
    const s = new DeadlineStateStore(g.store, { timeoutMs: 30 });
    const told: unknown[] = [];
    const work = watchOutcome(
      (e) => told.push(e),
      () => s.write(async () => 'committed'),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(told).toHaveLength(1);
    g.open();
    expect(await work).toBe('committed');
  });
});

const newDoc = {
  shipment: { ref: 'BOL-77', commodity: 'steel coils', value_usd: 40000 },
  parties: { broker: 'acme-brokerage', carrier: { name: 'VERIHA TRUCKING INC', dot_number: 158121 } },
};

describe('chaos: a hung embedded state store (DuckDB, injected through deps)', () => {
  let w: World;
  let hanging: HangingStore;
  let dot: number;
  beforeAll(async () => {
    w = await buildWorld();
    hanging = new HangingStore(w.state);
    w.svc.deps.state = new DeadlineStateStore(hanging, { timeoutMs: DEADLINE_MS, openMs: 200 });
    dot = Number((await w.svc.deps.readers.fmcsa!.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 1'))[0]!.dot_number);
  }, 120_000);
  afterAll(async () => {
    hanging?.resume();
    await w?.close();
  });

  it('answers a care POST 503 (outcome unknown) within the deadline; the retry with its key gets the first answer, one document', async () => {
    const before = Number((await w.state.query('SELECT count(*)::INTEGER AS n FROM care_documents'))[0]!.n);
    hanging.hangWrites(1); // the key's claim goes through; the document's write hangs
    const first = await bounded(getJson(w.svc.app, '/api/care', withKey('doc-1', newDoc)));
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).not.toBeNull();
    expect(first.body).toMatchObject({ status: 503, dependency: 'state', outcome: 'unknown' });
    expect(first.body.error).toMatch(/Idempotency-Key/);

    const health = await bounded(getJson(w.svc.app, '/api/health'));
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('degraded');
    expect(health.body.dependencies.state).toBe('slow');
    expect(health.body.dependency_detail.state).toMatchObject({ timeout_ms: DEADLINE_MS });
    expect(health.body.reasons.join(' ')).toMatch(new RegExp(`state store missed its ${DEADLINE_MS} ms deadline`));

    // The store comes back: the hung write commits after its request was answered 503.
    hanging.resume();
    const retry = await retryUntilAnswered(w.svc, '/api/care', withKey('doc-1', newDoc));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const after = Number((await w.state.query('SELECT count(*)::INTEGER AS n FROM care_documents'))[0]!.n);
    expect(after - before).toBe(1);
    const doc = await getJson(w.svc.app, `/api/care/${retry.body.document_id}.json`);
    expect(doc.status).toBe(200);
  });

  it('answers 503 when the key claim itself hangs; the retry then runs once', async () => {
    const before = Number((await w.state.query('SELECT count(*)::INTEGER AS n FROM care_documents'))[0]!.n);
    await new Promise((r) => setTimeout(r, 250)); // the breaker of the last test closes again
    hanging.hangWrites(0);
    const first = await bounded(getJson(w.svc.app, '/api/care', withKey('doc-2', newDoc)));
    expect(first.status).toBe(503);
    hanging.resume();
    const retry = await retryUntilAnswered(w.svc, '/api/care', withKey('doc-2', newDoc));
    expect(retry.status).toBe(201);
    const again = await bounded(getJson(w.svc.app, '/api/care', withKey('doc-2', newDoc)));
    expect(again.body.document_id).toBe(retry.body.document_id);
    const after = Number((await w.state.query('SELECT count(*)::INTEGER AS n FROM care_documents'))[0]!.n);
    expect(after - before).toBe(1);
  });

  it('a vetting whose write committed after its 503 is answered once to the retry: one record, one credit', async () => {
    await new Promise((r) => setTimeout(r, 250));
    hanging.hangWrites(1);
    const body = { dot_number: String(dot), broker_id: 'hang-broker' };
    const first = await bounded(getJson(w.svc.app, '/api/vet', withKey('vet-1', body)));
    expect(first.status).toBe(503);
    expect(first.body.outcome).toBe('unknown');
    hanging.resume();
    const retry = await retryUntilAnswered(w.svc, '/api/vet', withKey('vet-1', body));
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.credits).toMatchObject({ account_id: 'broker:hang-broker', balance: 29, charged: 1 });
    const rows = await w.state.query("SELECT count(*)::INTEGER AS n FROM vetting_records WHERE broker_id = 'hang-broker'");
    expect(rows[0]!.n).toBe(1);
    const acct = await w.state.query("SELECT balance FROM accounts WHERE account_id = 'broker:hang-broker'");
    expect(Number(acct[0]!.balance)).toBe(29);
  });

  it('without an Idempotency-Key the 503 still says the outcome is unknown', async () => {
    await new Promise((r) => setTimeout(r, 250));
    hanging.hangWrites(0);
    const r = await bounded(getJson(w.svc.app, '/api/care', withKey(null, newDoc)));
    hanging.resume();
    expect(r.status).toBe(503);
    expect(r.body.outcome).toBe('unknown');
  });
});

describe.skipIf(!HAS_POSTGRES)('chaos: a PostgreSQL state store stuck on a lock held by another session', () => {
  let dir: string;
  let db: { url: string; drop: () => Promise<void> };
  let other: postgres.Sql;
  const opened: Array<{ store: StateStore; svc: TestService }> = [];
  beforeAll(async () => {
    dir = await tempDir();
    db = await freshDatabase();
    other = postgres(db.url, { max: 2, onnotice: () => undefined });
  });
  afterAll(async () => {
    for (const o of opened) {
      await o.svc.close();
      await o.store.close().catch(() => undefined);
    }
    await other?.end({ timeout: 1 });
    await db?.drop();
    await removeDir(dir);
  });

  /** The API over PostgreSQL with a request deadline and the server-side statement/lock timeout. */
  async function serve(statementTimeoutMs: number) {
    const store = new DeadlineStateStore(await PgStateStore.open(db.url, { statementTimeoutMs }), { timeoutMs: DEADLINE_MS, openMs: 200 });
    const svc = await buildTestService(testConfig(dir), [], { state: store });
    opened.push({ store, svc });
    return { store, svc };
  }

  /** Holds the advisory lock an append to `id` takes (care.queries.ts `care:<id>`) until the returned release (afterEach at the latest). */
  async function holdDocumentLock(id: string): Promise<() => Promise<void>> {
    const reserved = await other.reserve();
    await reserved.unsafe('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`care:${id}`]);
    let held = true;
    const release = async () => {
      if (!held) return;
      held = false;
      await reserved.unsafe('SELECT pg_advisory_unlock_all()');
      reserved.release();
    };
    releases.push(release);
    return release;
  }
  const releases: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const r of releases.splice(0)) await r();
  });

  const eventCount = async (svc: TestService, id: string) => (await getJson(svc.app, `/api/care/${id}.json`)).body.document.event_count;
  const event = { stage: 'TENDER', actor: 'dispatch', evidence: {} };

  it('statement and lock timeout equal to the deadline: 503, health degraded, nothing written; the retry appends once', async () => {
    const { svc } = await serve(DEADLINE_MS);
    const id = (await getJson(svc.app, '/api/care', withKey(null, newDoc))).body.document_id;
    const release = await holdDocumentLock(id);
    const first = await bounded(getJson(svc.app, `/api/care/${id}/event`, withKey('ev-1', event)));
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).not.toBeNull();
    const health = await bounded(getJson(svc.app, '/api/health'));
    expect(health.body.status).toBe('degraded');
    expect(health.body.dependencies.state).toBe('slow');
    await release();
    const retry = await retryUntilAnswered(svc, `/api/care/${id}/event`, withKey('ev-1', event));
    expect(retry.status).toBe(201);
    expect(await eventCount(svc, id)).toBe(1);
  });

  it('a write that commits after its deadline (lock released in between) is answered once to the retry, as first answered', async () => {
    // Server-side timeouts above the request deadline: the append waits for the lock and commits after its 503.
    const { svc } = await serve(10 * DEADLINE_MS);
    const id = (await getJson(svc.app, '/api/care', withKey(null, newDoc))).body.document_id;
    const release = await holdDocumentLock(id);
    const first = await bounded(getJson(svc.app, `/api/care/${id}/event`, withKey('ev-2', event)));
    expect(first.status).toBe(503);
    expect(first.body.outcome).toBe('unknown');
    await new Promise((r) => setTimeout(r, 2 * DEADLINE_MS));
    await release();
    const retry = await retryUntilAnswered(svc, `/api/care/${id}/event`, withKey('ev-2', event));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.seq).toBe(1);
    expect(await eventCount(svc, id)).toBe(1);
  });
});
