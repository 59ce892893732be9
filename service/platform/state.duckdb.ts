/**
 * The embedded state store (the default; see state.store.ts for the
 * interface): one DuckDB file under DATA_DIR/state/,
 * opened read-write by the API process only (the warehouse snapshots stay
 * read-only). Every write goes through one queue and one writer connection:
 *
 * - Group commit: the writes waiting in the queue are applied in ONE
 *   transaction; each caller's promise resolves only after COMMIT returned.
 *   DuckDB writes the WAL and fsyncs it on every COMMIT (checked with strace:
 *   one fsync(wal) per transaction), so an acknowledged write survives kill -9.
 * - Serialisation: operations run one after another on the writer connection,
 *   so two appends to one custody chain can never read the same head (no fork).
 * - Batched rows: operations `tx.defer` their rows; the group flushes one
 *   JSON-batch statement per table (INSERTs, then UPDATEs) right before COMMIT.
 *   `tx.read` does not see deferred rows: keep what a later operation of the
 *   same group must see in `tx.cache` (balances, chain heads).
 * - Validate before writing: an operation throws its validation errors before
 *   its first `tx.write`/`tx.defer`; such an error rejects only that caller. An
 *   error after a write, or a failing flush or COMMIT, rolls the whole group back
 *   and replays its members one by one, so one bad operation never takes its
 *   neighbours down with it.
 *
 * Reads use a small pool of other connections to the same instance (MVCC: they
 * see committed data only).
 */
import { mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import {
  ConnectionPool,
  loadSql,
  openDatabase,
  PooledConnection,
  quoteIdentifier,
  quoteLiteral,
  type DuckDBInstance,
  type Params,
  type Row,
} from '../../lib/warehouse/duckdb.ts';
import { StateReadCache, writtenTables } from './state.read-cache.ts';
import type { BatchStatement, SqlParams, StateHealth, StateStore, StateTx } from './state.types.ts';

/** Positional parameters (`$1` = params[0]) as DuckDB's named bindings ('1', '2', ...). */
function positional(params?: SqlParams): Params | undefined {
  if (!params || params.length === 0) return undefined;
  const out: Params = {};
  params.forEach((v, i) => {
    out[String(i + 1)] = v === undefined ? null : v;
  });
  return out;
}

/** The DuckDB statement behind a batch: one `$rows` JSON array per group. */
function renderBatch(stmt: BatchStatement): string {
  return stmt.kind === 'insert' ? insertBatchSql(stmt.table, stmt.columns) : updateBatchSql(stmt.table, stmt.key!, stmt.columns);
}

type Op = { run: (tx: StateTx) => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void };

export interface DuckDbStateStoreOptions {
  /** Largest number of operations committed together. */
  maxGroup?: number;
  readPoolSize?: number;
  memoryLimit?: string;
  /** WAL size that triggers an automatic checkpoint (DuckDB size string, default 64MB). */
  checkpointThreshold?: string;
}

/**
 * `INSERT INTO <table> (<columns>) SELECT ... FROM unnest(from_json($rows, <types>))`:
 * the batch insert behind `tx.defer`. `columns` maps column names to DuckDB
 * types; rows are objects with those keys. Names come from code, never from input.
 */
function insertBatchSql(table: string, columns: Readonly<Record<string, string>>): string {
  const names = Object.keys(columns).map(quoteIdentifier).join(', ');
  return `INSERT INTO ${quoteIdentifier(table)} (${names}) SELECT ${names} FROM (SELECT unnest(from_json($rows, ${quoteLiteral(JSON.stringify([columns]))}), recursive := true))`;
}

/**
 * `UPDATE <table> SET <set columns> FROM unnest(from_json($rows, ...)) u WHERE <table>.<key> = u.<key>`:
 * the batch update behind `tx.defer` (use the key column as the defer key).
 */
function updateBatchSql(table: string, key: string, columns: Readonly<Record<string, string>>): string {
  const set = Object.keys(columns)
    .filter((c) => c !== key)
    .map((c) => `${quoteIdentifier(c)} = u.${quoteIdentifier(c)}`)
    .join(', ');
  return `UPDATE ${quoteIdentifier(table)} SET ${set} FROM (SELECT unnest(from_json($rows, ${quoteLiteral(JSON.stringify([columns]))}), recursive := true)) u WHERE ${quoteIdentifier(table)}.${quoteIdentifier(key)} = u.${quoteIdentifier(key)}`;
}

export class DuckDbStateStore implements StateStore {
  readonly backend = 'duckdb' as const;
  private readonly queue: Op[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** Caches shared across groups; cleared whenever a group rolls back. */
  readonly cache = new Map<string, unknown>();
  /** Counters for benchmarks and /api/status. */
  readonly stats = { commits: 0, operations: 0 };
  /** Reads answered without the database while no write to their tables has committed (state.read-cache.ts). */
  readonly readCache = new StateReadCache();

  private constructor(
    readonly file: string,
    private readonly instance: DuckDBInstance,
    private readonly writer: PooledConnection,
    private readonly readers: ConnectionPool,
    private readonly maxGroup: number,
  ) {}

  /** Opens (creating when absent) the state database and applies its DDL. */
  static async open(file: string, opts: DuckDbStateStoreOptions = {}): Promise<DuckDbStateStore> {
    const dir = path.dirname(file);
    await mkdir(dir, { recursive: true });
    const instance = await openDatabase(file, { threads: 1, memoryLimit: opts.memoryLimit ?? '256MB' });
    const writer = new PooledConnection(await instance.connect());
    await writer.raw.run(loadSql('./state.tables.sql', import.meta.url));
    // Checkpoint policy: DuckDB folds the WAL into the file once it passes this size, blocking commits meanwhile;
    // 64 MB keeps those pauses rare under load while bounding the WAL replayed after a crash. close() checkpoints.
    await writer.raw.run(`SET checkpoint_threshold = '${opts.checkpointThreshold ?? '64MB'}'`);
    // Make the new files' directory entries durable too (a fresh database right before a crash).
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
    const readers = await ConnectionPool.create(instance, opts.readPoolSize ?? 2);
    return new DuckDbStateStore(file, instance, writer, readers, opts.maxGroup ?? 512);
  }

  /** Read-only query on committed data. */
  query(sql: string, params?: SqlParams): Promise<Row[]> {
    return this.readers.query(sql, positional(params));
  }

  /** `query` through the read cache: valid until a write to a table it reads commits (state.read-cache.ts). */
  queryCached(sql: string, params?: SqlParams): Promise<Row[]> {
    return this.readCache.read(sql, params, () => this.readers.query(sql, positional(params)));
  }

  /** The embedded file is up while this process holds it open. */
  async health(): Promise<StateHealth> {
    return { backend: 'duckdb', up: !this.closed, detail: this.closed ? 'closed' : null };
  }

  /**
   * Queues `run` and resolves with its result once the transaction containing
   * it has committed (durably). Rejects with the operation's own error, or
   * with the commit error (then nothing of it was written).
   */
  write<T>(run: (tx: StateTx) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('state store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      this.startDrain();
    });
  }

  /**
   * Starts draining unless a drain is running. A drain that has already left
   * its loop when an operation is queued (the caller of the group it just
   * resolved may queue its next write before the drain's `finally` runs) is
   * followed by a new one, so no queued operation is left waiting.
   */
  private startDrain(): void {
    if (this.flushing) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.startDrain();
    });
  }

  private async drain(): Promise<void> {
    // Yield once so callers arriving in the same tick join the first group.
    await new Promise<void>((r) => setImmediate(r));
    while (this.queue.length > 0) {
      // The caches (balances, chain heads) only save reads: bound them between groups, when the database holds everything.
      if (this.cache.size > 50_000) this.cache.clear();
      const group = this.queue.splice(0, this.maxGroup);
      await this.commitGroup(group);
    }
  }

  /** Commits a group; any failure of the machinery itself rejects every member (never leaves a caller waiting). */
  private async commitGroup(group: Op[]): Promise<void> {
    try {
      await this.runGroup(group);
    } catch (e) {
      this.cache.clear();
      this.readCache.clear();
      await this.writer.raw.run('ROLLBACK').catch(() => undefined);
      for (const op of group) op.reject(e);
    }
  }

  private async runGroup(group: Op[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let dirty = false;
    let aborted: unknown = null;
    const deferred = new Map<string, { stmt: BatchStatement; rows: Map<string, Record<string, unknown>> }>();
    let rowSeq = 0;
    // What the group may write, for the read cache: bumped once COMMIT returned, before any caller is resolved.
    const touched = new Set<string>();
    let touchedUnknown = false;
    const note = (sql: string) => {
      const t = writtenTables(sql);
      if (t === null) touchedUnknown = true;
      else for (const x of t) touched.add(x);
    };
    await this.writer.raw.run('BEGIN TRANSACTION');
    for (const op of group) {
      let wrote = false;
      const tx: StateTx = {
        read: (sql, params) => {
          note(sql);
          return this.writer.query(sql, positional(params));
        },
        write: async (sql, params) => {
          wrote = true;
          dirty = true;
          note(sql);
          await this.writer.query(sql, positional(params));
        },
        defer: (stmt, row, key) => {
          wrote = true;
          dirty = true;
          let batch = deferred.get(stmt.id);
          if (!batch) deferred.set(stmt.id, (batch = { stmt, rows: new Map() }));
          batch.rows.set(key ?? `#${rowSeq++}`, row);
          touched.add(stmt.table.toLowerCase());
        },
        // One writer runs every operation in turn: nothing can interleave, so there is nothing to lock.
        lock: async () => false,
        readLocked: async (_key, reads) => {
          const out: Row[][] = [];
          for (const [sql, params] of reads) {
            note(sql);
            out.push(await this.writer.query(sql, positional(params)));
          }
          return out;
        },
        cache: this.cache,
      };
      try {
        outcomes.push({ ok: true, value: await op.run(tx) });
      } catch (e) {
        if (wrote) {
          aborted = e;
          break;
        }
        outcomes.push({ ok: false, error: e });
      }
    }
    if (aborted === null) {
      try {
        // One statement per table and kind for the whole group: this is what makes group commit cheap
        // (a prepared single-row INSERT costs milliseconds here; a 64-row JSON batch about the same).
        const batches = [...deferred.values()].sort((a, b) => Number(a.stmt.kind === 'update') - Number(b.stmt.kind === 'update'));
        for (const b of batches) await this.writer.query(renderBatch(b.stmt), { rows: JSON.stringify([...b.rows.values()]) });
        await this.writer.raw.run(dirty ? 'COMMIT' : 'ROLLBACK');
      } catch (e) {
        aborted = e;
      }
    }
    if (aborted !== null) {
      await this.writer.raw.run('ROLLBACK').catch(() => undefined);
      this.cache.clear();
      // Nothing of the group was written; forgetting the read cache too keeps a failed COMMIT from ever mattering.
      this.readCache.clear();
      if (group.length === 1) {
        group[0]!.reject(aborted);
        return;
      }
      // Replay each member alone so only the faulty one fails.
      for (const op of group) await this.commitGroup([op]);
      return;
    }
    if (dirty) this.readCache.bump(touchedUnknown ? null : touched);
    this.stats.commits += dirty ? 1 : 0;
    this.stats.operations += group.length;
    group.forEach((op, i) => {
      const o = outcomes[i]!;
      if (o.ok) op.resolve(o.value);
      else op.reject(o.error);
    });
  }

  /** Waits for queued writes, checkpoints (folds the WAL into the file) and closes. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.writer.raw.run('CHECKPOINT').catch(() => undefined);
    this.writer.close();
    await this.readers.close(); // also closes the instance
    void this.instance;
  }
}
