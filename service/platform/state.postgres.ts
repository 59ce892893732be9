/**
 * The PostgreSQL state store (DATABASE_URL; see state.store.ts for the
 * interface). Every API node writes; none owns the state.
 *
 * - Group commit, as the embedded store: the writes queued on this node are
 *   applied in one transaction on one writer connection, deferred rows flushed
 *   as one `json_populate_recordset` statement per table; each caller's promise
 *   resolves only after COMMIT returned with `synchronous_commit = on` (the
 *   commit record is flushed to the WAL on disk before the answer).
 * - Across nodes: an operation calls `tx.lock(key)` before reading what it
 *   decides on; that is `pg_advisory_xact_lock`, held until the group's COMMIT
 *   or ROLLBACK, so one custody chain or one account is changed by one
 *   transaction at a time whichever node runs it. `tx.cache` lives for one
 *   group only (other nodes write between groups).
 * - Failures: any database error inside a group rolls the whole group back
 *   (PostgreSQL aborts the transaction); a deadlock between two nodes' groups
 *   (40P01) or a serialisation failure replays the members one by one (one
 *   lock each: no deadlock); an unreachable database rejects every member with
 *   SourceUnavailableError (HTTP 503 with Retry-After), never a 500, and the
 *   driver reconnects on the next write.
 * - Migrations (service/platform/migrations/postgres/NNNN_name.sql) are applied
 *   at open, in one transaction holding an advisory lock, so two nodes starting
 *   at once apply each exactly once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import postgres from 'postgres';
import { SourceUnavailableError } from '../../lib/errors.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import type { BatchStatement, SqlParams, StateHealth, StateStore, StateTx, WriteHint } from './state.types.ts';

type Sql = postgres.Sql<Record<string, never>>;
type TxSql = postgres.TransactionSql<Record<string, never>>;
type Op = { run: (tx: StateTx) => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void; hint?: WriteHint };

export interface PgStateStoreOptions {
  /** Largest number of operations committed together (default 256). */
  maxGroup?: number;
  /** Connections: one writer plus readers (default 4). */
  poolSize?: number;
  /** Seconds to wait for a connection before answering 503 (default 5). */
  connectTimeoutSeconds?: number;
  /**
   * Server-side `statement_timeout` and `lock_timeout` of every session, in ms (the API sets both to its request
   * deadline, STATE_DEADLINE_MS: state.deadline.ts): a statement or lock wait past it is cancelled and rolled back
   * (503, nothing written) instead of committing after its request gave up. Unset: the server's defaults (none).
   * Migrations run without them.
   */
  statementTimeoutMs?: number;
}

/** Key of the advisory lock serialising migrations across nodes (any constant: "pline" in ASCII). */
const MIGRATION_LOCK = 0x706c696e65;
const MIGRATIONS_DIR = new URL('./migrations/postgres/', import.meta.url);
/** Seconds a client should wait before retrying a write the database could not take. */
const RETRY_AFTER_MS = 2000;

/** Driver and server conditions meaning "the database is not reachable now" (not a bug in the request). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovering)
  '53300', // too_many_connections
]);
const RETRY_CODES = new Set(['40P01', '40001']); // deadlock_detected, serialization_failure
/** The server cancelled a statement at its statement_timeout or lock_timeout (options.statementTimeoutMs): rolled back. */
const TIMEOUT_CODES = new Set(['57014', '55P03']); // query_canceled, lock_not_available

function codeOf(e: unknown): string {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : '';
}

/** Whether `e` says the database is unreachable (connection refused, lost, shutting down). */
export function isUnavailable(e: unknown): boolean {
  const code = codeOf(e);
  return UNAVAILABLE_CODES.has(code) || code.startsWith('08') || (e instanceof AggregateError && e.errors.some(isUnavailable));
}

function unavailable(e: unknown): SourceUnavailableError {
  return new SourceUnavailableError(
    'the state database (PostgreSQL) is not reachable; nothing of this request was written, retry shortly',
    { retryAfterMs: RETRY_AFTER_MS, response: { dependency: 'postgres' } },
    { cause: e },
  );
}

function timedOut(e: unknown): SourceUnavailableError {
  return new SourceUnavailableError(
    'the state database (PostgreSQL) cancelled this request at its statement or lock timeout; nothing of it was written, retry shortly',
    { retryAfterMs: RETRY_AFTER_MS, response: { dependency: 'postgres', outcome: 'not_written' } },
    { cause: e },
  );
}

/** A database error as callers see it: unreachable or cancelled at its timeout → 503; anything else unchanged (a bug: 500). */
function mapError(e: unknown): unknown {
  return isUnavailable(e) ? unavailable(e) : TIMEOUT_CODES.has(codeOf(e)) ? timedOut(e) : e;
}

/**
 * postgres@3.4.9 (the newest release) can throw from a `setImmediate` when a
 * connection closes between queueing a small write and flushing it
 * (`nextWrite` on a null socket: porsager/postgres#1154, #1208; fixes in
 * PR #1168/#1176/#1209, unreleased). Thrown there, it escapes every await and
 * kills the process, which is what a PostgreSQL restart does to busy
 * connections. The query it belonged to has already been rejected with
 * CONNECTION_CLOSED (so its callers got a 503), so this family of errors (a
 * null socket read inside the driver's connection code) is dropped;
 * so is a closed connection's rejection of a query nobody awaits any more, and a
 * socket error (a reset, or a refused reconnect to a PostgreSQL port) raised with node frames only (below);
 * any other uncaught exception still ends the process as before. Installed
 * only when nothing else handles uncaught exceptions (a server process).
 */
const DRIVER_CLOSED = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED']);

/** The PostgreSQL ports this process connects to: a refused reconnect to one of them is an outage, not a bug. */
const pgPorts = new Set<number>();

function guardDriverNullSocketWrite(url: string): void {
  pgPorts.add(portOf(url));
  if (process.listenerCount('uncaughtException') > 0) return;
  const handler = (e: Error): void => {
    // The driver's null-socket family (write, cork, end... on a socket a closing connection already dropped), thrown
    // from the driver's own connection code: the first frame of the stack is postgres/src/connection.js.
    const firstFrame = (e.stack ?? '').split('\n').find((l) => l.trim().startsWith('at ')) ?? '';
    if (
      e instanceof TypeError &&
      /Cannot read properties of null/.test(e.message) &&
      /postgres[\\/]src[\\/]connection\.js/.test(firstFrame)
    )
      return;
    // A connection that closes rejects every query queued on it (CONNECTION_CLOSED and its kin). A query issued beside
    // one that failed first (reads sent together, the sibling awaited first) has no caller left to tell: its request
    // has already been answered 503 through the sibling. Node raises such a rejection here (unhandled); it is dropped.
    if (DRIVER_CLOSED.has(String((e as { code?: unknown }).code)) && /postgres[\\/]src[\\/]connection\.js/.test(e.stack ?? '')) return;
    // A socket error during the outage (reset, broken pipe, or a refused or timed-out reconnect), emitted on a driver
    // socket that has lost its error listener (the same driver bug: the stack holds node internals only). A refused
    // connect must name a PostgreSQL port this process connects to. The database is unreachable and callers get 503s.
    const errno = e as NodeJS.ErrnoException & { port?: number };
    const nodeOnly = !(e.stack ?? '').split('\n').some((l) => l.trim().startsWith('at ') && !l.includes('node:'));
    const socketIo = (errno.code === 'ECONNRESET' || errno.code === 'EPIPE') && (errno.syscall === 'read' || errno.syscall === 'write');
    const reconnect =
      (errno.code === 'ECONNREFUSED' || errno.code === 'ETIMEDOUT') && errno.syscall === 'connect' && pgPorts.has(Number(errno.port));
    if (nodeOnly && (socketIo || reconnect)) {
      console.error(`[state] PostgreSQL socket ${errno.code} on ${errno.syscall} during an outage: ignored (requests answer 503)`);
      return;
    }
    process.off('uncaughtException', handler);
    throw e;
  };
  process.on('uncaughtException', handler);
}

function portOf(url: string): number {
  try {
    return Number(new URL(url).port || 5432);
  } catch {
    return 5432;
  }
}

function renderBatch(stmt: BatchStatement): string {
  const q = (n: string) => `"${n.replace(/"/g, '""')}"`;
  const cols = Object.keys(stmt.columns);
  const from = `json_populate_recordset(NULL::${q(stmt.table)}, $1::text::json)`;
  if (stmt.kind === 'insert')
    return `INSERT INTO ${q(stmt.table)} (${cols.map(q).join(', ')}) SELECT ${cols.map(q).join(', ')} FROM ${from}`;
  const key = stmt.key!;
  const set = cols
    .filter((c) => c !== key)
    .map((c) => `${q(c)} = u.${q(c)}`)
    .join(', ');
  return `UPDATE ${q(stmt.table)} SET ${set} FROM ${from} u WHERE ${q(stmt.table)}.${q(key)} = u.${q(key)}`;
}

function paramsOf(params?: SqlParams): postgres.ParameterOrJSON<never>[] {
  return (params ?? []).map((v) =>
    v === undefined ? null : typeof v === 'bigint' ? v.toString() : v,
  ) as postgres.ParameterOrJSON<never>[];
}

/**
 * Connects to `url` (with the driver's crash guard, no idle timeout, notices ignored) and applies pending migrations;
 * ends the connection and rethrows when they fail. Every PostgreSQL client of the process opens this way.
 */
export async function connectMigrated(
  url: string,
  options: Pick<postgres.Options<Record<string, postgres.PostgresType>>, 'max' | 'connect_timeout' | 'connection'>,
): Promise<Sql> {
  guardDriverNullSocketWrite(url);
  const sql = postgres(url, { ...options, idle_timeout: 0, onnotice: () => undefined }) as unknown as Sql;
  try {
    await migrate(sql);
  } catch (e) {
    await sql.end({ timeout: 1 }).catch(() => undefined);
    throw e;
  }
  return sql;
}

/** Applies the migrations not yet applied, under an advisory lock (safe when several nodes start at once). Returns the versions applied now. */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const applied: string[] = [];
  await sql.begin(async (t) => {
    // A migration may take longer than a request's deadline, and may wait for another node's migrations.
    await t.unsafe('SET LOCAL statement_timeout = 0');
    await t.unsafe('SET LOCAL lock_timeout = 0');
    await t.unsafe('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await t.unsafe(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version VARCHAR PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
    );
    const done = new Set((await t.unsafe('SELECT version FROM schema_migrations')).map((r) => String(r.version)));
    for (const f of files) {
      const version = f.slice(0, 4);
      if (done.has(version)) continue;
      await t.unsafe(readFileSync(new URL(f, MIGRATIONS_DIR), 'utf8'));
      await t.unsafe('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, f]);
      applied.push(version);
    }
  });
  return applied;
}

export class PgStateStore implements StateStore {
  readonly backend = 'postgres' as const;
  readonly stats = { commits: 0, operations: 0 };
  private readonly queue: Op[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly sql: Sql,
    private readonly maxGroup: number,
  ) {}

  /** Connects, applies pending migrations, and returns the store. Throws when the database cannot be reached. */
  static async open(url: string, opts: PgStateStoreOptions = {}): Promise<PgStateStore> {
    const sql = await connectMigrated(url, {
      max: opts.poolSize ?? 4,
      connect_timeout: opts.connectTimeoutSeconds ?? 5,
      // Durability of an acknowledged POST: COMMIT returns after the WAL is flushed (issue 20; the server default, pinned).
      connection: {
        application_name: 'proofline',
        synchronous_commit: 'on',
        ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs, lock_timeout: opts.statementTimeoutMs } : {}),
      },
    });
    return new PgStateStore(sql, opts.maxGroup ?? 256);
  }

  async query(text: string, params?: SqlParams): Promise<Row[]> {
    try {
      return (await this.sql.unsafe(text, paramsOf(params), { prepare: true })) as unknown as Row[];
    } catch (e) {
      throw mapError(e);
    }
  }

  async health(): Promise<StateHealth> {
    try {
      await Promise.race([
        this.sql.unsafe('SELECT 1'),
        new Promise((_, reject) => setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), 1000).unref()),
      ]);
      return { backend: 'postgres', up: true, detail: null };
    } catch (e) {
      return { backend: 'postgres', up: false, detail: (e as Error).message || codeOf(e) || 'unreachable' };
    }
  }

  write<T>(run: (tx: StateTx) => Promise<T>, hint?: WriteHint): Promise<T> {
    if (this.closed) return Promise.reject(new Error('state store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject, hint });
      this.startDrain();
    });
  }

  private startDrain(): void {
    if (this.flushing) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.startDrain();
    });
  }

  private async drain(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r)); // callers arriving in the same tick join the first group
    while (this.queue.length > 0) await this.commitGroup(this.queue.splice(0, this.maxGroup), 0);
  }

  private async commitGroup(group: Op[], attempt: number): Promise<void> {
    let outcome: GroupOutcome;
    try {
      outcome = await this.runGroup(group);
    } catch (e) {
      outcome = { kind: 'aborted', error: e };
    }
    if (outcome.kind === 'committed') {
      this.stats.commits += 1;
      this.stats.operations += group.length;
      group.forEach((op, i) => {
        const o = outcome.results[i]!;
        if (o.ok) op.resolve(o.value);
        else op.reject(o.error);
      });
      return;
    }
    const e = outcome.error;
    if (isUnavailable(e)) {
      for (const op of group) op.reject(unavailable(e));
      return;
    }
    if (group.length > 1) {
      // Replay each member alone so only the faulty one fails (and a deadlock between nodes' groups resolves).
      for (const op of group) await this.commitGroup([op], 0);
      return;
    }
    if (RETRY_CODES.has(codeOf(e)) && attempt < 5) return this.commitGroup(group, attempt + 1);
    group[0]!.reject(mapError(e));
  }

  private async runGroup(group: Op[]): Promise<GroupOutcome> {
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let aborted: unknown = null;
    const ABORT = Symbol('abort');
    try {
      await this.sql.begin(async (t: TxSql) => {
        const deferred = new Map<string, { stmt: BatchStatement; rows: Map<string, Record<string, unknown>> }>();
        const locked = new Set<string>();
        const cache = new Map<string, unknown>();
        let rowSeq = 0;
        let dbError: unknown = null;
        const exec = async (text: string, params?: SqlParams): Promise<Row[]> => {
          try {
            return (await t.unsafe(text, paramsOf(params), { prepare: true })) as unknown as Row[];
          } catch (e) {
            dbError ??= e; // PostgreSQL has aborted the transaction: the group cannot go on
            throw e;
          }
        };
        const lock = async (key: string): Promise<boolean> => {
          if (locked.has(key)) return false;
          locked.add(key);
          await exec('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
          return true;
        };
        // Hinted operations (WriteHint): their locks and reads leave together now, locks in key order (so two nodes'
        // groups never take them in opposite orders), and each operation's readLocked takes its answer from here:
        // one round trip for the group instead of one per operation.
        let immediateWrites = 0;
        const prefetched = new Map<Op, Promise<Row[][]>>();
        const firstByKey = new Map<string, Op>();
        for (const op of group) if (op.hint && !firstByKey.has(op.hint.lock)) firstByKey.set(op.hint.lock, op);
        for (const key of [...firstByKey.keys()].sort()) {
          const op = firstByKey.get(key)!;
          const p = Promise.all([lock(key), ...op.hint!.reads.map(([text, params]) => exec(text, params))]).then(
            ([, ...rows]) => rows as Row[][],
          );
          p.catch(() => undefined); // awaited by its operation, or never when an earlier one ended the group
          prefetched.set(op, p);
        }
        for (const op of group) {
          let wrote = false;
          const tx: StateTx = {
            read: (text, params) => exec(text, params),
            write: async (text, params) => {
              wrote = true;
              immediateWrites++;
              await exec(text, params);
            },
            defer: (stmt, row, key) => {
              wrote = true;
              let batch = deferred.get(stmt.id);
              if (!batch) deferred.set(stmt.id, (batch = { stmt, rows: new Map() }));
              batch.rows.set(key ?? `#${rowSeq++}`, row);
            },
            lock,
            // Pipelined: the lock and the reads leave in one write; PostgreSQL runs the reads once the lock is granted.
            readLocked: async (key, reads) => {
              const pre = prefetched.get(op);
              // The prefetched answer holds while nothing in this transaction has written since it was read.
              if (pre && immediateWrites === 0 && sameReads(op.hint!, key, reads)) {
                prefetched.delete(op);
                return pre;
              }
              const [, ...rows] = await Promise.all([lock(key), ...reads.map(([text, params]) => exec(text, params))]);
              return rows as Row[][];
            },
            cache,
          };
          try {
            results.push({ ok: true, value: await op.run(tx) });
          } catch (e) {
            if (wrote || dbError !== null) {
              aborted = dbError ?? e;
              throw ABORT;
            }
            results.push({ ok: false, error: e });
          }
        }
        const batches = [...deferred.values()].sort((a, b) => Number(a.stmt.kind === 'update') - Number(b.stmt.kind === 'update'));
        // Pipelined: PostgreSQL runs them in the order sent (INSERTs, then UPDATEs), in one round trip.
        await Promise.all(batches.map((b) => exec(renderBatch(b.stmt), [JSON.stringify([...b.rows.values()])])));
        // A failed statement nobody awaited (a prefetch no operation used) has aborted the transaction: PostgreSQL
        // would answer COMMIT with ROLLBACK, so the group must not be reported committed.
        if (dbError !== null) {
          aborted = dbError;
          throw ABORT;
        }
      });
    } catch (e) {
      return { kind: 'aborted', error: e === ABORT ? aborted : e };
    }
    return { kind: 'committed', results };
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.sql.end({ timeout: 5 });
  }
}

/** Whether a readLocked call asks exactly what its operation's hint prefetched. */
function sameReads(hint: WriteHint, key: string, reads: ReadonlyArray<readonly [sql: string, params?: SqlParams]>): boolean {
  if (hint.lock !== key || hint.reads.length !== reads.length) return false;
  return reads.every(([text, params], i) => {
    const [t, p] = hint.reads[i]!;
    return t === text && (p ?? []).length === (params ?? []).length && (p ?? []).every((v, j) => v === params![j]);
  });
}

type GroupOutcome =
  | { kind: 'committed'; results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> }
  | { kind: 'aborted'; error: unknown };
