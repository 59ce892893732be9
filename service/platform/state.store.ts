/**
 * The durable state store: one interface, two implementations.
 *
 * - Embedded (default): one DuckDB file under DATA_DIR/state/, owned by one
 *   process (state.duckdb.ts, state.claim.ts). `npm start` needs nothing else.
 * - PostgreSQL (DATABASE_URL set): any number of API processes on any
 *   machines write to one database (state.postgres.ts); migrations under
 *   service/platform/migrations/postgres/ are applied at startup.
 *
 * The families (vetting, credits, care, receipts, idempotency) write through
 * `write(run)`: `run` gets a `StateTx`, and the caller's promise resolves only
 * after the transaction holding its rows has committed durably (DuckDB: WAL
 * fsync per COMMIT; PostgreSQL: `synchronous_commit = on`). SQL is portable:
 * positional `$1, $2, ...` parameters, types both databases share. Rows written
 * with `defer` are batched per group and rendered by each backend
 * (insertRowsSql / updateRowsSql describe them; they are not SQL text).
 *
 * Concurrency contract (issue 20): before an operation reads what it will
 * decide on (a chain head, a balance), it calls `tx.lock(key)`. On PostgreSQL
 * that is a transaction-scoped advisory lock (held until COMMIT/ROLLBACK), so
 * two nodes appending to one custody chain are serialised (the chain never
 * forks, `seq` never repeats) and a debit never races another debit of the same
 * account. With one embedded writer every operation is already serialised and
 * `lock` costs nothing.
 */
import path from 'node:path';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import { DuckDbStateStore, type DuckDbStateStoreOptions } from './state.duckdb.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import type { BatchStatement, SqlParams, StateStore as StateStoreApi } from './state.types.ts';

export type { BatchStatement, StateTx, WriteHint } from './state.types.ts';
/** The store interface (state.types.ts); also the name of the embedded store's opener below. */
export type StateStore = StateStoreApi;

/** A batched INSERT into `table` of rows carrying `columns` (see BatchStatement). */
export function insertRowsSql(table: string, columns: Record<string, string>): BatchStatement {
  return { kind: 'insert', table, columns, id: `insert:${table}:${Object.keys(columns).join(',')}` };
}

/** A batched UPDATE of `table` matched on `key` (use the key value as the defer key: last write wins). */
export function updateRowsSql(table: string, key: string, columns: Record<string, string>): BatchStatement {
  return { kind: 'update', table, key, columns, id: `update:${table}:${key}:${Object.keys(columns).join(',')}` };
}

/**
 * A read of committed data through the store's read cache when it has one (the embedded store; state.read-cache.ts),
 * else a plain `query` (PostgreSQL). Same rows either way; never mutate them.
 */
export function queryCommitted(store: StateStoreApi, sql: string, params?: SqlParams): Promise<Row[]> {
  return store.queryCached ? store.queryCached(sql, params) : store.query(sql, params);
}

/** Path of the embedded state database inside DATA_DIR. */
export function stateDbPath(dataDir: string): string {
  return path.join(dataDir, 'state', 'proofline-state.duckdb');
}

/** The embedded store (kept under this name for its callers: `StateStore.open(stateDbPath(dir))`). */
export const StateStore = {
  open(file: string, opts: DuckDbStateStoreOptions = {}): Promise<StateStoreApi> {
    return DuckDbStateStore.open(file, opts);
  },
};

/**
 * The named statements of a family's state SQL file: each starts at a line
 * `-- name: <statement>` and runs to the next one (the file's own header
 * comment comes first and belongs to none). Parameters are positional (`$1`),
 * portable to both backends.
 */
export function loadStatements<N extends string>(relPath: string, base: string, names: readonly N[]): Record<N, string> {
  const text = loadSql(relPath, base);
  const out = {} as Record<N, string>;
  const parts = text.split(/^-- name: *(\w+) *$/m);
  for (let i = 1; i < parts.length; i += 2) out[parts[i] as N] = parts[i + 1]!.trim();
  for (const n of names) if (!out[n]) throw new Error(`${relPath}: no statement named ${n}`);
  return out;
}
