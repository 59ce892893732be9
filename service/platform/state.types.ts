/**
 * The state store's types (service/platform/state.store.ts explains the
 * contract; state.duckdb.ts and state.postgres.ts implement it).
 */
import type { Row } from '../../lib/warehouse/duckdb.ts';
import type { BreakerReport } from './deadline.ts';

/** Positional parameters: `$1` is `params[0]`. */
export type SqlParams = ReadonlyArray<string | number | boolean | bigint | null | undefined>;

/** A batched INSERT or UPDATE of one table's rows, rendered by each backend. Column names come from code, never from input. */
export interface BatchStatement {
  readonly kind: 'insert' | 'update';
  readonly table: string;
  /** Column → DuckDB type (VARCHAR, BIGINT, INTEGER, DOUBLE); PostgreSQL takes the table's own row type. */
  readonly columns: Readonly<Record<string, string>>;
  /** UPDATE only: the key column matched against the table's. */
  readonly key?: string;
  /** Identity of the statement within a group (kind, table, columns). */
  readonly id: string;
}

/** What an operation sees inside the group transaction. */
export interface StateTx {
  /** Reads inside the transaction (sees its own flushed writes, not deferred rows). */
  read(sql: string, params?: SqlParams): Promise<Row[]>;
  /** Writes now. After the first write, a throw rolls the group back. */
  write(sql: string, params?: SqlParams): Promise<void>;
  /**
   * Buffers one row for a batch statement; flushed once per group, right
   * before COMMIT: INSERTs first, then UPDATEs, each in first-use order. With
   * `key`, a later row with the same key replaces the earlier one (last write
   * wins: chain heads, balances). Counts as a write.
   */
  defer(stmt: BatchStatement, row: Record<string, unknown>, key?: string): void;
  /**
   * Takes the lock named `key` until the transaction ends (PostgreSQL: advisory
   * transaction lock; embedded: nothing to do, one writer). Call it before
   * reading what the operation decides on. Not a write. Resolves true when it
   * has just taken a lock another writer may have held (read again what you
   * read before it), false when there was nothing to wait for (embedded store,
   * or already held by this transaction).
   */
  lock(key: string): Promise<boolean>;
  /**
   * `lock(key)`, then `reads`, each seeing what was committed before the lock
   * was granted. PostgreSQL sends them together (one round trip: the server
   * runs them in order, the reads after the lock); embedded: plain reads.
   */
  readLocked(key: string, reads: ReadonlyArray<readonly [sql: string, params?: SqlParams]>): Promise<Row[][]>;
  /**
   * Values valid while this transaction's view holds (chain heads, balances,
   * key bindings). Embedded: shared across groups (one writer). PostgreSQL: one
   * group only, since other nodes write between groups.
   */
  cache: Map<string, unknown>;
}

/** The database behind the store, as /api/health and /api/status report it. */
export interface StateHealth {
  backend: 'duckdb' | 'postgres';
  up: boolean;
  /** Why it is down, when it is. */
  detail: string | null;
}

/**
 * What an operation will lock and read first, when the caller knows it before
 * the operation runs (a custody append: its document's lock, head and stages).
 * PostgreSQL sends the locks and reads of every hinted operation of a group
 * together when the group starts (locks in key order), so the operation's
 * `readLocked(lock, reads)` is answered without a round trip of its own; the
 * embedded store ignores hints. A hint never changes results: an operation
 * whose `readLocked` differs from its hint, or that runs after an immediate
 * `write` in its group, reads as without one.
 */
export interface WriteHint {
  readonly lock: string;
  readonly reads: ReadonlyArray<readonly [sql: string, params?: SqlParams]>;
}

export interface StateStore {
  readonly backend: 'duckdb' | 'postgres';
  /** Counters for benchmarks and /api/status. */
  readonly stats: { commits: number; operations: number };
  /** Read-only query on committed data. */
  query(sql: string, params?: SqlParams): Promise<Row[]>;
  /**
   * `query`, answered from a read cache when the store can prove the answer
   * unchanged (the embedded store: no write to a table the statement reads has
   * committed since the rows were read; state.read-cache.ts). A write is visible
   * to every read that starts after its `write` promise resolved. Absent
   * (PostgreSQL: other nodes write the same tables): callers use `query`
   * (`queryCommitted` in state.store.ts picks). The rows are shared between
   * callers: never mutate them (the array is the caller's own).
   */
  queryCached?(sql: string, params?: SqlParams): Promise<Row[]>;
  /**
   * Queues `run` and resolves with its result once the transaction containing
   * it has committed durably. Rejects with the operation's own error, or with
   * the commit error (then nothing of it was written; a 503 when the database
   * is unreachable). `hint`: see WriteHint.
   */
  write<T>(run: (tx: StateTx) => Promise<T>, hint?: WriteHint): Promise<T>;
  /** Whether the database answers now. */
  health(): Promise<StateHealth>;
  /**
   * With deadlines on the request path (state.deadline.ts): the breaker /api/health reports, and a trivial read
   * that bypasses it (health probes under its own deadline).
   */
  readonly breaker?: { report(): BreakerReport };
  probe?(): Promise<boolean>;
  /** Waits for queued writes and closes. */
  close(): Promise<void>;
}
