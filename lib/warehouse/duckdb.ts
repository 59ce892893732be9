/**
 * DuckDB access for the whole project: opening databases with explicit
 * resource limits, a connection pool for readers, `.sql` file loading and
 * parameter binding that keeps integer ids integer (a JS number bound as
 * DOUBLE silently disables the ART index: see shared notes, tech.md).
 *
 * Contract: values are always bound as `$named` parameters, never spliced into
 * SQL text; identifiers are spliced only through `quoteIdentifier` from an
 * allow-list.
 */
import { readFileSync } from 'node:fs';
import {
  DuckDBInstance,
  DuckDBTypeId,
  type DuckDBConnection,
  type DuckDBPreparedStatement,
  type DuckDBValue,
  type Json,
} from '@duckdb/node-api';

export type { DuckDBConnection, DuckDBInstance, Json };
export type Params = Record<string, DuckDBValue | undefined>;
export type Row = Record<string, Json>;

export interface OpenOptions {
  readOnly?: boolean;
  memoryLimit?: string;
  threads?: number;
  tempDirectory?: string;
}

/** Opens (or creates) a database file, or `:memory:`. One instance per file per process. */
export async function openDatabase(path: string, opts: OpenOptions = {}): Promise<DuckDBInstance> {
  const options: Record<string, string> = {};
  if (opts.readOnly) options.access_mode = 'READ_ONLY';
  if (opts.memoryLimit) options.memory_limit = opts.memoryLimit;
  if (opts.threads) options.threads = String(opts.threads);
  if (opts.tempDirectory) options.temp_directory = opts.tempDirectory;
  return DuckDBInstance.create(path, options);
}

/** Double-quotes an identifier for SQL. Use only with names from an allow-list (table DDL). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Single-quotes a string literal. Only for places DuckDB cannot take a parameter (COPY targets, ATTACH paths). */
export function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

const sqlCache = new Map<string, string>();
/**
 * Loads a `.sql` file once (cached). Files start with a header comment naming
 * their parameters and result columns. `base` is usually `import.meta.url`.
 */
export function loadSql(relPath: string, base: string): string {
  const url = new URL(relPath, base);
  const key = url.href;
  let sql = sqlCache.get(key);
  if (sql === undefined) {
    sql = readFileSync(url, 'utf8');
    sqlCache.set(key, sql);
  }
  return sql;
}

const INTEGER_TYPES = new Set<DuckDBTypeId>([
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
]);

/** Binds named parameters using the statement's own parameter types where DuckDB knows them. */
export function bindParams(stmt: DuckDBPreparedStatement, params: Params = {}): void {
  stmt.clearBindings();
  for (const [name, raw] of Object.entries(params)) {
    let idx: number;
    try {
      idx = stmt.parameterIndex(name);
    } catch {
      continue; // parameter not used by this statement
    }
    const value = raw === undefined ? null : raw;
    if (value === null) {
      stmt.bindNull(idx);
      continue;
    }
    let typeId: DuckDBTypeId | undefined;
    try {
      typeId = stmt.parameterTypeId(idx);
    } catch {
      typeId = undefined;
    }
    if (
      typeof value === 'number' &&
      Number.isInteger(value) &&
      (typeId === undefined || INTEGER_TYPES.has(typeId) || typeId === DuckDBTypeId.INVALID || typeId === DuckDBTypeId.ANY)
    ) {
      if (typeId === DuckDBTypeId.INTEGER) stmt.bindInteger(idx, value);
      else stmt.bindBigInt(idx, BigInt(value));
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      if (typeof value === 'string') stmt.bindVarchar(idx, value);
      else if (typeof value === 'boolean') stmt.bindBoolean(idx, value);
      else if (typeof value === 'bigint') stmt.bindBigInt(idx, value);
      else stmt.bindDouble(idx, value);
    } else {
      stmt.bindValue(idx, value);
    }
  }
}

/**
 * Runs `fn` with the session's `preserve_insertion_order` set to `ordered`, then puts the session's setting back
 * (what a statement may gain either way is measured where it is used: packed-store.ts, carrier-name-index.ts).
 */
export async function withInsertionOrder<T>(conn: DuckDBConnection, ordered: boolean, fn: () => Promise<T>): Promise<T> {
  const [was] = (await conn.runAndReadAll(`SELECT current_setting('preserve_insertion_order')::BOOLEAN`)).getRows();
  await conn.run(`SET preserve_insertion_order = ${ordered}`);
  try {
    return await fn();
  } finally {
    await conn.run(`SET preserve_insertion_order = ${was?.[0] === false ? 'false' : 'true'}`);
  }
}

/** Runs one statement with named parameters and returns rows as JSON-safe objects (BIGINT/DECIMAL as strings, dates ISO). */
export async function queryRows(conn: DuckDBConnection, sql: string, params?: Params): Promise<Row[]> {
  if (!params || Object.keys(params).length === 0) {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson() as Row[];
  }
  const stmt = await conn.prepare(sql);
  try {
    bindParams(stmt, params);
    return (await stmt.runAndReadAll()).getRowObjectsJson() as Row[];
  } finally {
    stmt.destroySync();
  }
}

/**
 * A fixed pool of connections to one database. Each connection has its own
 * prepared-statement cache and serves one caller at a time: a prepared
 * statement shared by concurrent async callers returns wrong rows (tech.md).
 */
export class ConnectionPool {
  private readonly idle: PooledConnection[] = [];
  private readonly waiters: Array<(c: PooledConnection) => void> = [];
  private readonly all: PooledConnection[] = [];
  private closed = false;
  private inFlight = 0;
  private drainWaiters: Array<() => void> = [];

  private constructor(readonly instance: DuckDBInstance) {}

  /** `init` runs once on each new connection (e.g. connection-local TEMP VIEWs over parquet files). */
  static async create(instance: DuckDBInstance, size: number, init?: (conn: DuckDBConnection) => Promise<void>): Promise<ConnectionPool> {
    const pool = new ConnectionPool(instance);
    for (let i = 0; i < size; i++) {
      const raw = await instance.connect();
      if (init) await init(raw);
      const c = new PooledConnection(raw);
      pool.all.push(c);
      pool.idle.push(c);
    }
    return pool;
  }

  /** Runs `fn` with an exclusive connection. */
  async withConnection<T>(fn: (conn: PooledConnection) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('connection pool is closed');
    this.inFlight++;
    const conn = this.idle.pop() ?? (await new Promise<PooledConnection>((resolve) => this.waiters.push(resolve)));
    try {
      return await fn(conn);
    } finally {
      const next = this.waiters.shift();
      if (next) next(conn);
      else this.idle.push(conn);
      this.inFlight--;
      if (this.inFlight === 0) for (const d of this.drainWaiters.splice(0)) d();
    }
  }

  /** Prepared (cached per connection), parameter-bound query returning JSON-safe rows. */
  query(sql: string, params?: Params): Promise<Row[]> {
    return this.withConnection((c) => c.query(sql, params));
  }

  /** Waits for in-flight queries, then closes every connection and the instance. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight > 0) await new Promise<void>((r) => this.drainWaiters.push(r));
    for (const c of this.all) c.close();
    this.instance.closeSync();
  }
}

export class PooledConnection {
  private readonly statements = new Map<string, DuckDBPreparedStatement>();
  constructor(readonly raw: DuckDBConnection) {}

  async query(sql: string, params?: Params): Promise<Row[]> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = await this.raw.prepare(sql);
      this.statements.set(sql, stmt);
    }
    bindParams(stmt, params);
    return (await stmt.runAndReadAll()).getRowObjectsJson() as Row[];
  }

  close(): void {
    for (const s of this.statements.values()) s.destroySync();
    this.statements.clear();
    this.raw.closeSync();
  }
}
