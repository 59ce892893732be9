/**
 * Publishing a staging run as a new immutable snapshot of its domain:
 *
 *  1. take the domain writer lock (one publisher per domain) and open a fresh
 *     `serving.duckdb` in the staging directory with the domain DDL (`openServing`);
 *  2. parquet-only tables (DomainSpec.parquetTables): hard-link each part into
 *     `tables/` as the table's file(s) (rewritten to the DDL only when a part's
 *     columns differ), hash them; they never enter serving.duckdb and are seen
 *     by `derive` (and later by readers) through views over read_parquet
 *     (`linkParquetOnlyTables`);
 *  3. load the serving tables: rows from the run's parts, tables carried forward
 *     from the previous snapshot, the cumulative `sources` and `origin_leaves`
 *     (`loadServingTables`);
 *  4. the `derive` step (which may also replace a parquet-only table, make files
 *     the children wrote one, and write packed record stores) (`deriveTables`);
 *  5. export every serving table to zstd parquet (the warehouse of record) and
 *     hash it (`exportServingTables`), create the lookup indexes, CHECKPOINT,
 *     close (`indexServing`);
 *  6. write manifest.json, rename the directory into `snapshots/`, switch CURRENT
 *     atomically, prune old snapshots, remove the run's parts (`finalizeSnapshot`; kept with
 *     `keepParts`, for the next run's part reuse).
 *
 * Delta publish (incremental runs with `carry.delta`, lib/warehouse/incremental.ts): instead of steps 1-5 over
 * every row, the previous snapshot's `serving.duckdb` is copied and changed in place. Rows of inputs that are not
 * reused are deleted and the run's parts inserted (the key values, e.g. CIKs, of every row removed or added are
 * collected in `_delta_keys`); `derive` gets `ctx.delta` and recomputes only what hangs on those keys; a table
 * neither the load nor derive changed is hard-linked from the previous snapshot (parquet and manifest entry
 * reused), and a cumulative table (`origin_leaves`, `sources`) becomes a directory table whose previous files are
 * hard-linked and whose new rows are one more file (compacted into one file past `MAX_APPEND_FILES`). A night with
 * nothing changed therefore writes no table. Falls back to a full publish when the previous snapshot has no
 * serving database, another DuckDB version wrote it, its tables differ from the domain DDL, or it has grown past
 * MAX_SERVING_GROWTH of its size when last built whole (deleted rows' space is not given back).
 *
 * Parts are hard-linked, never moved, and removed only after the CURRENT
 * switch, so a crash (or a retried publish) before step 6's switch leaves the
 * previous snapshot current and untouched and the run still publishable; the
 * next run cleans an abandoned staging directory.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { hashCanonical, hashFile } from '../hash.ts';
import { domainIndexesSql, domainTablesSql } from './domain.ts';
import { openDatabase, queryRows, quoteIdentifier, quoteLiteral } from './duckdb.ts';
import { assertSafeName, linkOrCopy, snapshotDir, snapshotsDir, tempDir } from './layout.ts';
import { acquireWriterLock } from './lock.ts';
import { LEAF_STORE, packedPaths, writePackedStore, writePackedStoreDelta, type PackedInfo, type PackedSelect } from './packed-store.ts';
import {
  newSnapshotId,
  pruneSnapshots,
  readCurrentManifest,
  tableFilePaths,
  writeCurrentPointer,
  writeFileAtomic,
  type SnapshotManifest,
  type TableManifest,
} from './snapshot.ts';
import { linkCurrentSnapshot, writeCurrentSql } from './views.ts';
import type { StagingRun } from './staging.ts';

/** Tables that accumulate across snapshots instead of being replaced. */
const CUMULATIVE = new Set(['sources', 'origin_leaves']);
/** Tables that describe only the run that published them. */
const PER_RUN = new Set(['rejects']);
/** A cumulative table published as a directory of appended files is rewritten as one file past this many files. */
const MAX_APPEND_FILES = 32;
/**
 * A serving database changed in place keeps the space of deleted rows (DuckDB reuses free blocks but never
 * shrinks the file; it grew ~5-9 MB a night on the 125 MB medium sample): past this factor of its size when last
 * built whole, the next publish is a full one, which writes it compactly again. The base size travels with each
 * snapshot in `serving-base.json`.
 */
const MAX_SERVING_GROWTH = 1.5;
const SERVING_BASE_FILE = 'serving-base.json';

/** Runs one timed step of a derive (a domain's derive reports its steps' wall and CPU time under `name`). */
export type DeriveStep = (name: string, fn: () => Promise<unknown>) => Promise<void>;

export interface DeriveContext {
  run: StagingRun;
  previous: SnapshotManifest | null;
  /** Absolute path (or glob, for a directory table) of a table's parquet in the previous snapshot, or null. */
  previousTable(table: string): string | null;
  /** The domain's parquet-only tables (visible to derive SQL as views of the same name). */
  parquetTables: ReadonlySet<string>;
  /**
   * Replaces a parquet-only table by the result of `selectSql` (which may read
   * the table itself): one new file, hashed. Projected to the table's DDL
   * unless `columns: 'query'` (a derived table whose columns the query defines).
   * `rowGroupSize` (default 122,880): smaller groups for tables read by point queries.
   */
  replaceParquetTable(table: string, selectSql: string, opts?: { columns?: 'ddl' | 'query'; rowGroupSize?: number }): Promise<void>;
  /**
   * Writes a packed record store `packed/<name>` from `selectSql` (two columns:
   * unique INTEGER key, VARCHAR value without raw tabs or newlines, e.g. JSON
   * text), or from batches of such SELECTs (PackedSelect); listed in the manifest's `packed` and opened by readers.
   */
  writePacked(name: string, selectSql: PackedSelect): Promise<PackedInfo>;
  /**
   * On a delta publish: the previous snapshot's packed store `name` with the records of `changed` keys replaced by
   * the rows of `selectSql` (the same two columns, restricted to those keys; a changed key it does not return is
   * removed): unchanged records are copied as bytes, not recomputed (packed-store.ts, writePackedStoreDelta).
   * Falls back to `writePacked(name, fullSelectSql)` when the previous snapshot has no such store.
   */
  writePackedDelta(name: string, selectSql: PackedSelect, changed: ReadonlySet<number>, fullSelectSql: PackedSelect): Promise<PackedInfo>;
  /**
   * Part reuse (lib/warehouse/incremental.ts): whether the run's parts of `table` are exactly the previous
   * snapshot's kept parts (same names, hard links of the same files): the table's rows are then the previous
   * snapshot's, and so is anything derived from them alone.
   */
  samePartsAsPrevious(table: string): Promise<boolean>;
  /**
   * Hard-links the previous snapshot's packed store `name` into this one with its manifest entry, instead of
   * writing it again (for a store whose source rows `samePartsAsPrevious` shows unchanged). False, and nothing
   * linked, when the previous snapshot has no such store.
   */
  linkPreviousPacked(name: string): Promise<boolean>;
  /**
   * Hard-links the previous snapshot's files of the parquet-only table `table` into this one, same names and
   * layout, and hashes them, instead of deriving it again (for a derived table whose source rows
   * `samePartsAsPrevious` shows unchanged and whose derivation did not change). False, and nothing linked, when
   * the previous snapshot has no such table or its files are gone.
   */
  linkPreviousParquetTable(table: string): Promise<boolean>;
  /**
   * Makes `files` (zstd parquet the run's children already wrote, with exactly the table's DDL columns, in this
   * order) the parquet-only table `table`: publish hard-links them as `tables/<table>/NNNNN.parquet` (a directory
   * table, read in file order) and hashes them, instead of loading and copying the rows again. Checked: same
   * columns and types. For a big table whose parts are already final (quotes: quote_bars on the fast path).
   */
  linkParquetTable(table: string, files: string[]): Promise<void>;
  /** Set on a delta publish (see the module comment): derive recomputes only what the changed keys touch. */
  delta: DeltaContext | null;
}

/**
 * What a delta publish tells `derive`. The serving database is the previous snapshot's, with the rows of
 * changed and removed inputs deleted and the run's parts inserted; derived tables still hold the previous rows.
 */
export interface DeltaContext {
  /** The column derived rows hang on (CarryOptions.delta.key, e.g. `cik`). */
  key: string;
  /** Catalog of the serving database: `<catalog>.main.<table>` names a base table past a temp view of the same name. */
  catalog: string;
  /** Temp table `(k)`: key values of every row the load removed or added; derive may add more before using it. */
  keysTable: string;
  /** Tables whose rows the load changed (deleted or inserted). */
  changed: ReadonlySet<string>;
  /** Marks a table derive changed: it is exported anew (a table nobody changed is hard-linked from the previous snapshot). */
  touch(table: string): void;
}

export interface PublishOptions {
  keep: number;
  memoryLimit?: string;
  threads?: number;
  inputDigest?: string | null;
  meta?: Record<string, unknown>;
  /** Builds derived tables inside the serving database after the parts are loaded. */
  derive?: (conn: DuckDBConnection, ctx: DeriveContext) => Promise<void>;
  lockTimeoutMs?: number;
  /**
   * Incremental run (lib/warehouse/incremental.ts): rows of the previous snapshot whose input is reused are
   * carried into the new one beside the run's parts; every other previous row is dropped (its input changed or
   * is gone). Without it, a table with parts takes only its parts (a full run).
   */
  carry?: CarryOptions;
  /**
   * Part reuse (lib/warehouse/incremental.ts): the snapshot keeps the run's `parts/` (hard links of its
   * parquet-only tables' files, so they cost no space there) for the next run to link the reused inputs' parts.
   */
  keepParts?: boolean;
  /** Test hook: called between steps so a test can simulate a crash. */
  onStep?: (step: 'loaded' | 'derived' | 'exported' | 'indexed' | 'renamed') => Promise<void> | void;
}

export interface CarryOptions {
  /** SHA-256 of the reused inputs. */
  reuseSha256: string[];
  /** Reused input paths (absolute and relative): their previous `rejects` rows are carried. */
  reuseFiles: string[];
  /**
   * Tables of `replaceTables` that the children write (not derived at publish) and are carried too; derived
   * tables are rebuilt by `derive` and never carried.
   */
  tables?: string[];
  /**
   * Tables whose rows name no input, carried with the rows of another table: `{topics: {key: 'transcript_key',
   * table: 'transcripts'}}` carries the previous topics whose `transcript_key` a carried transcript has.
   */
  via?: Record<string, { key: string; table: string }>;
  /**
   * Delta publish (see the module comment): the previous serving database is changed in place. `key` names the
   * column every derived row hangs on (the registry's `cik`); the pipeline's derive must honour `ctx.delta`.
   */
  delta?: { key: string };
}

export interface PublishResult {
  manifest: SnapshotManifest;
  dir: string;
  pruned: string[];
  /** Milliseconds per publish phase (parquet_tables, load, derive, export, index, finalize). */
  timings: Record<string, number>;
  /** `delta` when the previous serving database was changed in place, else `full`. */
  mode: 'full' | 'delta';
}

/** Phase timings of the last publish in this process (benchmarks report them). */
export let lastPublishTimings: Record<string, number> = {};
/** Mode and tables linked from the previous snapshot / written anew by the last publish in this process (benchmarks). */
export let lastPublishShape: { mode: 'full' | 'delta'; linked: string[]; written: string[]; export_ms?: Record<string, number> } = {
  mode: 'full',
  linked: [],
  written: [],
};

interface DdlColumn {
  name: string;
  type: string;
}

/** Column names and types of a parquet file (or list of files), in order. */
async function parquetColumns(conn: DuckDBConnection, files: string[]): Promise<DdlColumn[]> {
  const rows = await queryRows(conn, `DESCRIBE SELECT * FROM read_parquet([${files.map(quoteLiteral).join(', ')}])`);
  return rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
}

/** SELECT list projecting any source to the DDL columns (missing ones NULL). */
function ddlProjection(ddl: DdlColumn[], have: Set<string>): string {
  return ddl
    .map((c) =>
      have.has(c.name)
        ? `CAST(${quoteIdentifier(c.name)} AS ${c.type}) AS ${quoteIdentifier(c.name)}`
        : `CAST(NULL AS ${c.type}) AS ${quoteIdentifier(c.name)}`,
    )
    .join(', ');
}

const sameColumns = (a: DdlColumn[], b: DdlColumn[]) =>
  a.length === b.length && a.every((c, i) => c.name === b[i].name && c.type === b[i].type);

/**
 * The state one publish carries through its phases: the serving database being
 * built in the staging directory, the parquet-only tables' files, and the
 * manifest entries gathered so far.
 */
interface PublishSession {
  run: StagingRun;
  previous: SnapshotManifest | null;
  prevDir: string | null;
  servingPath: string;
  tablesDir: string;
  packedDir: string;
  db: DuckDBInstance;
  conn: DuckDBConnection;
  /** Manifest entries of the tables exported so far. */
  tables: Record<string, TableManifest>;
  packed: Record<string, PackedInfo>;
  parquetOnly: Set<string>;
  replace: Set<string>;
  /** Parquet-only table → its files (absolute, in tables/) and DDL columns. */
  parquetFiles: Map<string, string[]>;
  parquetDdl: Map<string, DdlColumn[]>;
  /** Hashing (Node) of parquet-only tables, overlapping with DuckDB's work on the next phases. */
  hashing: Map<string, Promise<TableManifest>>;
  withParts: Set<string>;
  carry: CarryOptions | null;
  /** Set when the previous serving database was copied and is changed in place (delta publish). */
  delta: DeltaState | null;
}

interface DeltaState {
  key: string;
  catalog: string;
  /** Tables whose rows the load or derive changed. */
  dirty: Set<string>;
  /** Cumulative table → temp table of the rows this run appended. */
  appended: Map<string, string>;
  linked: string[];
  written: string[];
  /** Milliseconds per table in the export phase (benchmarks). */
  exportMs: Record<string, number>;
  /** Columns of every serving table, read once. */
  columns?: Map<string, DdlColumn[]>;
  /** Size of the serving database when last built whole (see MAX_SERVING_GROWTH). */
  fullBytes: number;
}

/** The previous serving database's size and its size when last built whole (a snapshot of older code: its own). */
async function servingBase(prevDir: string, prevServing: string): Promise<{ bytes: number; full_bytes: number }> {
  const bytes = (await stat(prevServing)).size;
  const recorded = await readFile(path.join(prevDir, SERVING_BASE_FILE), 'utf8').then(
    (t) => Number(JSON.parse(t)?.full_bytes),
    () => Number.NaN,
  );
  return { bytes, full_bytes: Number.isFinite(recorded) && recorded > 0 ? recorded : bytes };
}

/** Absolute path (or glob, for a directory table) of a table's parquet in the previous snapshot, or null. */
function previousTablePath(s: Pick<PublishSession, 'previous' | 'prevDir'>, t: string): string | null {
  const tm = s.previous?.tables[t];
  if (!tm || !s.prevDir) return null;
  return tm.files ? path.join(s.prevDir, 'tables', t, '*.parquet') : path.join(s.prevDir, 'tables', `${t}.parquet`);
}

/** Names of the serving database's base tables, sorted. */
async function baseTables(conn: DuckDBConnection): Promise<string[]> {
  const rows = await queryRows(
    conn,
    `SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  return rows.map((r) => String(r.table_name));
}

/**
 * Phase 1: a fresh `serving.duckdb` (and empty tables/, packed/) in the staging directory, with the domain's DDL;
 * on a delta publish, a copy of the previous snapshot's serving database instead (checked against the DDL).
 */
async function openServing(run: StagingRun, opts: PublishOptions): Promise<PublishSession> {
  const { dataDir } = run;
  const previous = await readCurrentManifest(dataDir, run.domain);
  const prevDir = previous ? snapshotDir(dataDir, run.domain, previous.snapshot_id) : null;
  const servingPath = path.join(run.dir, 'serving.duckdb');
  const clearServing = async () => {
    await rm(servingPath, { force: true });
    await rm(`${servingPath}.wal`, { force: true });
  };
  await clearServing();
  const tablesDir = path.join(run.dir, 'tables');
  await rm(tablesDir, { recursive: true, force: true });
  await mkdir(tablesDir, { recursive: true });
  const packedDir = path.join(run.dir, 'packed');
  await rm(packedDir, { recursive: true, force: true });
  await mkdir(tempDir(dataDir), { recursive: true });
  const parquetOnly = new Set(run.spec.parquetTables ?? []);
  const carry = opts.carry ?? null;
  if (carry && parquetOnly.size) throw new Error(`${run.domain} has parquet-only tables: incremental carry is not supported for them`);
  const open = () =>
    openDatabase(servingPath, { memoryLimit: opts.memoryLimit ?? '1GB', threads: opts.threads ?? 2, tempDirectory: tempDir(dataDir) });
  const prevServing = prevDir ? path.join(prevDir, 'serving.duckdb') : null;
  let delta: DeltaState | null = null;
  let db: DuckDBInstance | null = null;
  const prevBase = prevServing && existsSync(prevServing) ? await servingBase(prevDir!, prevServing) : null;
  if (carry?.delta && previous && prevServing && prevBase && prevBase.bytes <= MAX_SERVING_GROWTH * prevBase.full_bytes) {
    await copyFile(prevServing, servingPath);
    db = await open();
    const conn = await db.connect();
    try {
      const reusable = await previousServingReusable(conn, run, previous);
      if (reusable) {
        const [{ c }] = await queryRows(conn, 'SELECT current_database() AS c');
        delta = {
          key: carry.delta.key,
          catalog: String(c),
          dirty: new Set(),
          appended: new Map(),
          linked: [],
          written: [],
          exportMs: {},
          fullBytes: prevBase.full_bytes,
        };
      }
    } finally {
      conn.closeSync();
    }
    if (!delta) {
      db.closeSync();
      db = null;
      await clearServing();
    }
  }
  db ??= await open();
  const conn = await db.connect();
  const s: PublishSession = {
    run,
    previous,
    prevDir,
    servingPath,
    tablesDir,
    packedDir,
    db,
    conn,
    tables: {},
    packed: {},
    parquetOnly,
    replace: new Set(run.spec.replaceTables ?? []),
    parquetFiles: new Map(),
    parquetDdl: new Map(),
    hashing: new Map(),
    withParts: new Set(),
    carry,
    delta,
  };
  try {
    await conn.run(`SET preserve_insertion_order = false`);
    if (!delta) await conn.run(domainTablesSql(run.spec));
    s.withParts = new Set(await run.tablesWithParts());
  } catch (e) {
    closeServing(s);
    throw e;
  }
  return s;
}

/**
 * Whether a copied previous serving database can be changed in place: written by this DuckDB version, and its
 * tables and columns exactly those the domain DDL creates (checked by creating the DDL in a scratch schema).
 */
async function previousServingReusable(conn: DuckDBConnection, run: StagingRun, previous: SnapshotManifest): Promise<boolean> {
  const [{ v }] = await queryRows(conn, 'SELECT version() AS v');
  if (String(v) !== previous.duckdb_version) return false;
  await conn.run('CREATE SCHEMA _ddl_check');
  try {
    await conn.run(`SET schema = '_ddl_check'`);
    await conn.run(domainTablesSql(run.spec));
    await conn.run(`SET schema = 'main'`);
    const rows = await queryRows(
      conn,
      `SELECT table_schema AS s, table_name || '.' || column_name || ':' || data_type || '@' || ordinal_position AS c
       FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema IN ('main', '_ddl_check')`,
    );
    const cols = (schema: string) =>
      rows
        .filter((r) => r.s === schema)
        .map((r) => String(r.c))
        .sort()
        .join('\n');
    return cols('main') === cols('_ddl_check');
  } finally {
    await conn.run(`SET schema = 'main'`);
    await conn.run('DROP SCHEMA _ddl_check CASCADE');
  }
}

function closeServing(s: PublishSession): void {
  s.conn.closeSync();
  s.db.closeSync();
}

async function viewOver(s: PublishSession, t: string): Promise<void> {
  await s.conn.run(
    `CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(t)} AS SELECT * FROM read_parquet([${s.parquetFiles.get(t)!.map(quoteLiteral).join(', ')}])`,
  );
}

/** Starts hashing a parquet-only table's files (the row count is read now: one statement at a time per connection). */
async function hashTable(s: PublishSession, t: string): Promise<void> {
  const files = s.parquetFiles.get(t)!;
  const isDir = files.length !== 1 || path.basename(files[0]) !== `${t}.parquet`;
  const [{ n }] = await queryRows(s.conn, `SELECT count(*)::BIGINT AS n FROM read_parquet([${files.map(quoteLiteral).join(', ')}])`);
  const p = (async (): Promise<TableManifest> => {
    const hashed = await Promise.all(files.map(async (f) => [path.basename(f), await hashFile(f)] as const));
    if (!isDir) return { rows: Number(n), ...hashed[0][1], storage: 'parquet' };
    const fileMap = Object.fromEntries(hashed);
    return {
      rows: Number(n),
      sha256: hashCanonical(Object.fromEntries(hashed.map(([f, h]) => [f, h.sha256]))),
      bytes: hashed.reduce((a, [, h]) => a + h.bytes, 0),
      storage: 'parquet',
      files: fileMap,
    };
  })();
  p.catch(() => undefined);
  s.hashing.set(t, p);
}

/** DeriveContext.replaceParquetTable of a session. */
async function replaceParquetTable(
  s: PublishSession,
  t: string,
  selectSql: string,
  ropts: { columns?: 'ddl' | 'query'; rowGroupSize?: number } = {},
): Promise<void> {
  if (!s.parquetOnly.has(t)) throw new Error(`${t} is not a parquet-only table of ${s.run.domain}`);
  await s.hashing.get(t)?.catch(() => undefined);
  const ddl = s.parquetDdl.get(t)!;
  const out = path.join(s.tablesDir, `${t}.parquet`);
  const tmp = `${out}.new`;
  const projection = ropts.columns === 'query' ? '*' : ddlProjection(ddl, new Set(ddl.map((c) => c.name)));
  await s.conn.run(
    `COPY (SELECT ${projection} FROM (${selectSql})) TO ${quoteLiteral(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ropts.rowGroupSize ?? 122880})`,
  );
  await rm(path.join(s.tablesDir, t), { recursive: true, force: true });
  await rename(tmp, out);
  s.parquetFiles.set(t, [out]);
  await viewOver(s, t);
  await hashTable(s, t);
}

/** DeriveContext.linkPreviousParquetTable of a session. */
async function linkPreviousParquetTable(s: PublishSession, t: string): Promise<boolean> {
  if (!s.parquetOnly.has(t)) throw new Error(`${t} is not a parquet-only table of ${s.run.domain}`);
  const tm = s.previous?.tables[t];
  if (!tm || !s.prevDir || tm.storage !== 'parquet') return false;
  const given = tableFilePaths(s.prevDir, t, tm);
  if (!given.every((f) => existsSync(f))) return false;
  await s.hashing.get(t)?.catch(() => undefined);
  await rm(path.join(s.tablesDir, `${t}.parquet`), { force: true });
  await rm(path.join(s.tablesDir, t), { recursive: true, force: true });
  if (tm.files) await mkdir(path.join(s.tablesDir, t), { recursive: true });
  const files: string[] = [];
  for (const src of given) {
    const out = tm.files ? path.join(s.tablesDir, t, path.basename(src)) : path.join(s.tablesDir, `${t}.parquet`);
    await linkOrCopy(src, out);
    files.push(out);
  }
  s.parquetFiles.set(t, files);
  await viewOver(s, t);
  await hashTable(s, t);
  return true;
}

/** DeriveContext.linkParquetTable of a session. */
async function linkParquetTable(s: PublishSession, t: string, given: string[]): Promise<void> {
  if (!s.parquetOnly.has(t)) throw new Error(`${t} is not a parquet-only table of ${s.run.domain}`);
  if (given.length === 0) throw new Error(`no files given for ${t}`);
  await s.hashing.get(t)?.catch(() => undefined);
  if (!sameColumns(await parquetColumns(s.conn, given), s.parquetDdl.get(t)!))
    throw new Error(`files given for ${t} do not have the table's columns`);
  await rm(path.join(s.tablesDir, `${t}.parquet`), { force: true });
  await rm(path.join(s.tablesDir, t), { recursive: true, force: true });
  await mkdir(path.join(s.tablesDir, t), { recursive: true });
  const files: string[] = [];
  for (const [i, src] of given.entries()) {
    const out = path.join(s.tablesDir, t, `${String(i).padStart(5, '0')}.parquet`);
    await linkOrCopy(src, out);
    files.push(out);
  }
  s.parquetFiles.set(t, files);
  await viewOver(s, t);
  await hashTable(s, t);
}

/**
 * Phase 2: parquet-only tables. The run's parts (or, without parts, the previous snapshot's files) become the
 * table's files, hard-linked (rewritten to the DDL only when a part's columns differ); the DDL table is dropped and
 * a view over the files takes its name.
 */
async function linkParquetOnlyTables(s: PublishSession): Promise<void> {
  const { conn, run, previous, prevDir } = s;
  for (const t of [...s.parquetOnly].sort()) {
    const ddl = (
      await queryRows(
        conn,
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $t ORDER BY ordinal_position`,
        { t },
      )
    ).map((r) => ({ name: String(r.column_name), type: String(r.data_type) }));
    if (ddl.length === 0) throw new Error(`parquet-only table ${t} is not defined in domain ${run.domain}`);
    s.parquetDdl.set(t, ddl);
    const partDir = path.join(run.dir, 'parts', assertSafeName('table', t));
    const parts = s.withParts.has(t)
      ? (await readdir(partDir))
          .filter((f) => f.endsWith('.parquet'))
          .sort()
          .map((f) => path.join(partDir, f))
      : [];
    const prev = previous?.tables[t] && prevDir && !s.replace.has(t) ? tableFilePaths(prevDir, t, previous.tables[t]) : [];
    const sources = parts.length ? parts : prev;
    const files: string[] = [];
    if (sources.length === 0) {
      const out = path.join(s.tablesDir, `${t}.parquet`);
      await conn.run(`COPY (SELECT * FROM ${quoteIdentifier(t)} LIMIT 0) TO ${quoteLiteral(out)} (FORMAT parquet, COMPRESSION zstd)`);
      files.push(out);
    } else {
      if (sources.length > 1) await mkdir(path.join(s.tablesDir, t), { recursive: true });
      for (const src of sources) {
        const out = sources.length === 1 ? path.join(s.tablesDir, `${t}.parquet`) : path.join(s.tablesDir, t, path.basename(src));
        const have = await parquetColumns(conn, [src]);
        if (sameColumns(have, ddl)) await linkOrCopy(src, out);
        else {
          await conn.run(
            `COPY (SELECT ${ddlProjection(ddl, new Set(have.map((c) => c.name)))} FROM read_parquet(${quoteLiteral(src)})) TO ${quoteLiteral(`${out}.tmp`)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
          );
          await rename(`${out}.tmp`, out);
        }
        files.push(out);
      }
    }
    await conn.run(`DROP TABLE ${quoteIdentifier(t)}`);
    s.parquetFiles.set(t, files);
    await viewOver(s, t);
    await hashTable(s, t);
  }
}

/**
 * Phase 3: serving tables. A table with parts in this run takes them; `origin_leaves` and `sources` accumulate the
 * previous snapshot's rows with the run's (leaves deduplicated by hash, the earliest run kept); any other table
 * without parts carries the previous snapshot's rows forward, except replaced (derived) and per-run tables.
 */
async function loadServingTables(s: PublishSession): Promise<void> {
  const { conn, run } = s;
  if (s.carry) await createCarrySets(s, s.carry);
  for (const t of await baseTables(conn)) {
    const q = quoteIdentifier(t);
    const parts = s.withParts.has(t) ? quoteLiteral(path.join(run.dir, 'parts', t, '*.parquet')) : null;
    const prev = previousTablePath(s, t);
    if (s.carry && prev && (await carryTable(s, t, prev))) {
      if (parts) await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${parts}, union_by_name = true)`);
    } else if (t === 'origin_leaves') {
      const sources = [
        prev ? `SELECT *, 0 AS _prio FROM read_parquet(${quoteLiteral(prev)})` : null,
        parts ? `SELECT *, 1 AS _prio FROM read_parquet(${parts}, union_by_name = true)` : null,
      ].filter(Boolean);
      if (sources.length) {
        await conn.run(
          `INSERT INTO ${q} BY NAME SELECT * EXCLUDE (_prio) FROM (${sources.join(' UNION ALL BY NAME ')}) QUALIFY row_number() OVER (PARTITION BY leaf_hash ORDER BY _prio, first_run_id) = 1`,
        );
      }
    } else if (CUMULATIVE.has(t)) {
      if (prev) await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${quoteLiteral(prev)})`);
      if (parts) await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${parts}, union_by_name = true)`);
    } else if (parts) {
      await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${parts}, union_by_name = true)`);
    } else if (prev && !s.replace.has(t) && !PER_RUN.has(t)) {
      await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${quoteLiteral(prev)}, union_by_name = true)`);
    }
  }
}

/**
 * The reused inputs as temp tables of the serving connection: `_carry_sha` (SHA-256), `_carry_file` (paths) and
 * `_carry_leaf` (leaf hashes of the previous snapshot's origin leaves resting on a reused input).
 */
async function createCarrySets(s: PublishSession, carry: CarryOptions): Promise<void> {
  const file = path.join(s.run.dir, 'carry.ndjson');
  const lines = [
    ...carry.reuseSha256.map((v) => JSON.stringify({ k: 's', v })),
    ...carry.reuseFiles.map((v) => JSON.stringify({ k: 'f', v })),
  ];
  await writeFile(file, lines.length ? `${lines.join('\n')}\n` : '');
  const src = lines.length
    ? `read_json(${quoteLiteral(file)}, format = 'newline_delimited', columns = {'k': 'VARCHAR', 'v': 'VARCHAR'})`
    : `(SELECT NULL::VARCHAR AS k, NULL::VARCHAR AS v WHERE false)`;
  await s.conn.run(`CREATE OR REPLACE TEMP TABLE _carry_sha AS SELECT DISTINCT v AS sha FROM ${src} WHERE k = 's'`);
  await s.conn.run(`CREATE OR REPLACE TEMP TABLE _carry_file AS SELECT DISTINCT v AS file FROM ${src} WHERE k = 'f'`);
  // A delta publish reads the leaves from the copied serving database (the previous snapshot's, not yet changed).
  const leaves = s.delta ? `${qualified(s, 'origin_leaves')}` : previousTablePath(s, 'origin_leaves');
  await s.conn.run(
    leaves
      ? `CREATE OR REPLACE TEMP TABLE _carry_leaf AS SELECT DISTINCT leaf_hash FROM ${s.delta ? leaves : `read_parquet(${quoteLiteral(leaves)})`} WHERE content_sha256 IN (SELECT sha FROM _carry_sha)`
      : `CREATE OR REPLACE TEMP TABLE _carry_leaf AS SELECT NULL::VARCHAR AS leaf_hash WHERE false`,
  );
}

/**
 * Incremental carry of one serving table: inserts the previous snapshot's rows of reused inputs and returns
 * true, or returns false when the table is not carried (cumulative tables, derived tables). A carried table
 * must name its input (`content_sha256` or `origin_leaf_hash`); one that cannot is an error, never a silent
 * full copy.
 */
async function carryTable(s: PublishSession, t: string, prev: string): Promise<boolean> {
  const carry = s.carry!;
  if (CUMULATIVE.has(t)) return false;
  const q = quoteIdentifier(t);
  const from = `read_parquet(${quoteLiteral(prev)}, union_by_name = true)`;
  if (PER_RUN.has(t)) {
    // A reject names its file as the step did: the input's path, or a path relative to some folder above it.
    await s.conn.run(
      `INSERT INTO ${q} BY NAME SELECT * FROM ${from} r WHERE EXISTS (SELECT 1 FROM _carry_file c WHERE c.file = r.file OR ends_with(c.file, '/' || r.file))`,
    );
    return true;
  }
  if (s.replace.has(t) && !carry.tables?.includes(t)) return false;
  await s.conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM ${from} WHERE ${await carryWhere(s, t, prev)}`);
  return true;
}

/**
 * The WHERE clause selecting a previous table's rows of reused inputs (see `carryTable`). `prev` is the previous
 * parquet, or null on a delta publish (the columns are then read from the serving table itself).
 */
async function carryWhere(s: PublishSession, t: string, prev: string | null): Promise<string> {
  const cols = new Set((prev ? await parquetColumns(s.conn, [prev]) : await tableColumns(s, t)).map((c) => c.name));
  if (cols.has('content_sha256')) return `content_sha256 IN (SELECT sha FROM _carry_sha)`;
  if (cols.has('origin_leaf_hash')) return `origin_leaf_hash IN (SELECT leaf_hash FROM _carry_leaf)`;
  const via = s.carry?.via?.[t];
  const viaPrev = via ? previousTablePath(s, via.table) : null;
  if (via && viaPrev) {
    const k = quoteIdentifier(via.key);
    return `${k} IN (SELECT ${k} FROM read_parquet(${quoteLiteral(viaPrev)}, union_by_name = true) WHERE ${await carryWhere(s, via.table, viaPrev)})`;
  }
  if (via) return 'false';
  throw new Error(`table ${t} of ${s.run.domain} names no input (content_sha256, origin_leaf_hash): it cannot be carried incrementally`);
}

/** `<catalog>.main.<table>` on a delta publish (past temp views of the same name), else the quoted name. */
function qualified(s: Pick<PublishSession, 'delta'>, t: string): string {
  return s.delta ? `${quoteIdentifier(s.delta.catalog)}.main.${quoteIdentifier(t)}` : quoteIdentifier(t);
}

/** Column names and types of a serving table (on a delta publish, read once for all tables). */
async function tableColumns(s: PublishSession, t: string): Promise<DdlColumn[]> {
  if (s.delta) {
    if (!s.delta.columns) {
      const all = new Map<string, DdlColumn[]>();
      for (const r of await queryRows(
        s.conn,
        `SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index`,
      ))
        all.set(String(r.table_name), [
          ...(all.get(String(r.table_name)) ?? []),
          { name: String(r.column_name), type: String(r.data_type) },
        ]);
      s.delta.columns = all;
    }
    return s.delta.columns.get(t) ?? [];
  }
  const rows = await queryRows(
    s.conn,
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $t ORDER BY ordinal_position`,
    { t },
  );
  return rows.map((r) => ({ name: String(r.column_name), type: String(r.data_type) }));
}

/** Runs a statement and returns the rows it changed. */
async function changedBy(conn: DuckDBConnection, sql: string): Promise<number> {
  return Number((await conn.run(sql)).rowsChanged);
}

/**
 * Phase 3 of a delta publish: the copied serving database holds the previous snapshot's rows. Rows of inputs
 * that are not reused are deleted, the run's parts inserted, and the delta key of every row removed or added is
 * recorded in `_delta_keys`; cumulative tables take only rows they do not have yet (kept in `_append_<table>`
 * for the appended export file); `rejects` keeps those of reused files; derived tables are left to derive.
 * Before the first change the lookup indexes are dropped (built again by indexServing: maintaining them through
 * the deletes and inserts, then writing every changed index at CHECKPOINT, cost more), except those of the
 * cumulative tables, which only take appended rows (rebuilding the leaf-hash index of `origin_leaves` alone cost
 * more than the rest); a night that changes nothing keeps them all and writes nothing.
 */
async function loadDelta(s: PublishSession): Promise<void> {
  const { conn, run } = s;
  const d = s.delta!;
  let indexesDropped = false;
  const beforeChange = async () => {
    if (indexesDropped) return;
    indexesDropped = true;
    for (const r of await queryRows(
      conn,
      `SELECT index_name, table_name FROM duckdb_indexes() WHERE database_name = current_database() AND schema_name = 'main'`,
    ))
      if (!CUMULATIVE.has(String(r.table_name))) await conn.run(`DROP INDEX ${quoteIdentifier(String(r.index_name))}`);
  };
  await createCarrySets(s, s.carry!);
  const keyType = [...(await Promise.all((await baseTables(conn)).map((t) => tableColumns(s, t))))]
    .flat()
    .find((c) => c.name === d.key)?.type;
  await conn.run(`CREATE OR REPLACE TEMP TABLE _delta_keys (k ${keyType ?? 'VARCHAR'})`);
  const count = async (sql: string) => Number((await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM ${sql}`))[0]!.n);
  for (const t of await baseTables(conn)) {
    const q = qualified(s, t);
    const parts = s.withParts.has(t)
      ? `read_parquet(${quoteLiteral(path.join(run.dir, 'parts', t, '*.parquet'))}, union_by_name = true)`
      : null;
    let changed = 0;
    if (CUMULATIVE.has(t)) {
      if (!parts) continue;
      const tmp = quoteIdentifier(`_append_${t}`);
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${tmp} AS SELECT * FROM ${q} LIMIT 0`);
      // origin_leaves: a leaf already published keeps its first run (the full publish keeps the earliest too).
      await conn.run(
        t === 'origin_leaves'
          ? `INSERT INTO ${tmp} BY NAME SELECT * FROM ${parts} p WHERE NOT EXISTS (SELECT 1 FROM ${q} o WHERE o.leaf_hash = p.leaf_hash) QUALIFY row_number() OVER (PARTITION BY leaf_hash ORDER BY first_run_id) = 1`
          : `INSERT INTO ${tmp} BY NAME SELECT * FROM ${parts}`,
      );
      if ((await count(tmp)) > 0) {
        await beforeChange();
        changed = await changedBy(conn, `INSERT INTO ${q} SELECT * FROM ${tmp}`);
      }
      d.appended.set(t, `_append_${t}`);
    } else if (PER_RUN.has(t)) {
      const gone = `${q} WHERE rowid NOT IN (SELECT r.rowid FROM ${q} r WHERE EXISTS (SELECT 1 FROM _carry_file c WHERE c.file = r.file OR ends_with(c.file, '/' || r.file)))`;
      if ((await count(gone)) > 0) {
        await beforeChange();
        changed = await changedBy(conn, `DELETE FROM ${gone}`);
      }
      if (parts) {
        await beforeChange();
        changed += await changedBy(conn, `INSERT INTO ${q} BY NAME SELECT * FROM ${parts}`);
      }
    } else if (s.replace.has(t) && !s.carry!.tables?.includes(t)) {
      continue;
    } else {
      // NULL counts as not kept, as in the full publish's carry (`WHERE keep`).
      const keep = `coalesce(${await carryWhere(s, t, null)}, false)`;
      const hasKey = (await tableColumns(s, t)).some((c) => c.name === d.key);
      const k = quoteIdentifier(d.key);
      // The keys of the rows to delete (a NULL key too, so the count says whether any row goes; NULL matches no key).
      const going = hasKey
        ? await changedBy(conn, `INSERT INTO _delta_keys SELECT DISTINCT ${k} FROM ${q} WHERE NOT (${keep})`)
        : await count(`${q} WHERE NOT (${keep})`);
      if (going > 0) {
        await beforeChange();
        changed = await changedBy(conn, `DELETE FROM ${q} WHERE NOT (${keep})`);
      }
      if (parts) {
        await beforeChange();
        if (hasKey) await conn.run(`INSERT INTO _delta_keys SELECT DISTINCT ${k} FROM ${parts} WHERE ${k} IS NOT NULL`);
        changed += await changedBy(conn, `INSERT INTO ${q} BY NAME SELECT * FROM ${parts}`);
      }
    }
    if (changed > 0) d.dirty.add(t);
  }
}

/** The packed-store writers of a publish (derive's, and the leaf store's): each records its store in the manifest. */
function packedWriters(s: PublishSession) {
  const writePacked = async (name: string, selectSql: PackedSelect) => {
    assertSafeName('packed store', name);
    await mkdir(s.packedDir, { recursive: true });
    const info = await writePackedStore(s.conn, selectSql, s.packedDir, name);
    s.packed[name] = info;
    return info;
  };
  const writePackedDelta = async (name: string, selectSql: PackedSelect, changed: ReadonlySet<number>, fullSelectSql: PackedSelect) => {
    assertSafeName('packed store', name);
    const prevDir = s.prevDir ? path.join(s.prevDir, 'packed') : null;
    const from = prevDir ? packedPaths(prevDir, name) : null;
    if (!prevDir || !from || !s.previous?.packed?.[name] || !existsSync(from.data) || !existsSync(from.index))
      return writePacked(name, fullSelectSql);
    await mkdir(s.packedDir, { recursive: true });
    const info = await writePackedStoreDelta(s.conn, selectSql, s.packedDir, name, prevDir, changed);
    s.packed[name] = info;
    return info;
  };
  const linkPreviousPacked = async (name: string) => {
    assertSafeName('packed store', name);
    const info = s.previous?.packed?.[name];
    if (!info || !s.prevDir) return false;
    const from = packedPaths(path.join(s.prevDir, 'packed'), name);
    if (!existsSync(from.data) || !existsSync(from.index)) return false;
    await mkdir(s.packedDir, { recursive: true });
    const to = packedPaths(s.packedDir, name);
    await linkOrCopy(from.data, to.data);
    await linkOrCopy(from.index, to.index);
    s.packed[name] = info;
    return true;
  };
  return { writePacked, writePackedDelta, linkPreviousPacked };
}

/** Phase 4: the domain's derive step inside the serving database (it may replace or link parquet-only tables and write packed stores). */
async function deriveTables(s: PublishSession, derive: NonNullable<PublishOptions['derive']>): Promise<void> {
  const { writePacked, writePackedDelta, linkPreviousPacked } = packedWriters(s);
  const partFiles = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.parquet')).sort();
  const samePartsAsPrevious = async (t: string) => {
    if (!s.prevDir) return false;
    const cur = path.join(s.run.dir, 'parts', assertSafeName('table', t));
    const prev = path.join(s.prevDir, 'parts', t);
    const [a, b] = [await partFiles(cur), await partFiles(prev)];
    if (a.length === 0 || a.join('\n') !== b.join('\n')) return false;
    for (const f of a) {
      const [x, y] = [await stat(path.join(cur, f)), await stat(path.join(prev, f))];
      if (x.ino !== y.ino || x.dev !== y.dev) return false;
    }
    return true;
  };
  await derive(s.conn, {
    samePartsAsPrevious,
    linkPreviousPacked,
    run: s.run,
    previous: s.previous,
    previousTable: (t) => previousTablePath(s, t),
    parquetTables: s.parquetOnly,
    replaceParquetTable: (t, sql, o) => replaceParquetTable(s, t, sql, o),
    linkParquetTable: (t, files) => linkParquetTable(s, t, files),
    linkPreviousParquetTable: (t) => linkPreviousParquetTable(s, t),
    writePacked,
    writePackedDelta,
    delta: s.delta
      ? {
          key: s.delta.key,
          catalog: s.delta.catalog,
          keysTable: '_delta_keys',
          changed: new Set(s.delta.dirty),
          touch: (t) => s.delta!.dirty.add(t),
        }
      : null,
  });
}

/**
 * SELECT of the leaf store's records whose leaf hashes start with one of `firsts` (hex digits) and, optionally,
 * whose key is in temp table `_leaf_keys`: per key, the list of its leaves ordered by hash, each with the columns of
 * the verify lookup (service/receipts/receipts.queries.ts FIND_LEAF, same order). Only well-formed hashes (64
 * lower-case hex digits, the only ones `/api/verify` accepts).
 */
function leafStoreSelect(s: PublishSession, firsts: string[], onlyChanged: boolean): string {
  return `SELECT ('0x' || left(leaf_hash, 7))::INTEGER AS k,
    to_json(list_sort(list(struct_pack(leaf_hash := leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := kind, source := source,
      source_url := source_url, retrieved_at := retrieved_at, content_sha256 := content_sha256, record_sha256 := record_sha256, parent := parent,
      table_name := table_name))))::VARCHAR AS v
  FROM ${qualified(s, 'origin_leaves')}
  WHERE left(leaf_hash, 1) IN (${firsts.map((c) => quoteLiteral(c)).join(', ')}) AND regexp_matches(leaf_hash, '^[0-9a-f]{64}$')
    ${onlyChanged ? `AND ('0x' || left(leaf_hash, 7))::INTEGER IN (SELECT k FROM _leaf_keys)` : ''}
  GROUP BY k`;
}

/**
 * Phase 4b (issue 22): the leaf store `packed/origin_leaves`, every leaf of the domain's cumulative `origin_leaves`
 * keyed by its hash's first 28 bits (leaves sharing a key share one record), so that a verify lookup is a binary
 * search and one read, not a DuckDB query per domain and per chain link. Written in 8 batches by the hash's first
 * digit (a batch's list states stay an eighth of the table: 765 k leaves at full scale). A delta publish adds only
 * what it appended (`origin_leaves` only takes rows): the records of the appended leaves' keys are recomputed and
 * the rest copied as bytes; with nothing appended the previous store is hard-linked.
 */
async function writeLeafStore(s: PublishSession): Promise<void> {
  const { writePacked, writePackedDelta, linkPreviousPacked } = packedWriters(s);
  const batches = (onlyChanged: boolean) =>
    ['01', '23', '45', '67', '89', 'ab', 'cd', 'ef'].map((pair) => leafStoreSelect(s, [...pair], onlyChanged));
  const appended = s.delta?.appended.get('origin_leaves');
  if (s.delta && s.previous?.packed?.[LEAF_STORE]) {
    const added = appended ? Number((await queryRows(s.conn, `SELECT count(*)::BIGINT AS n FROM ${quoteIdentifier(appended)}`))[0]!.n) : 0;
    if (added === 0 && (await linkPreviousPacked(LEAF_STORE))) return;
    if (appended) {
      await s.conn.run(
        `CREATE OR REPLACE TEMP TABLE _leaf_keys AS SELECT DISTINCT ('0x' || left(leaf_hash, 7))::INTEGER AS k FROM ${quoteIdentifier(appended)} WHERE regexp_matches(leaf_hash, '^[0-9a-f]{64}$')`,
      );
      try {
        const keys = new Set((await queryRows(s.conn, `SELECT k FROM _leaf_keys`)).map((r) => Number(r.k)));
        await writePackedDelta(LEAF_STORE, batches(true), keys, batches(false));
      } finally {
        await s.conn.run('DROP TABLE IF EXISTS temp.main._leaf_keys');
      }
      return;
    }
  }
  await writePacked(LEAF_STORE, batches(false));
}

/** Phase 5a: every serving table exported to zstd parquet (the warehouse of record) and hashed; the parquet-only hashes collected. */
async function exportServingTables(s: PublishSession): Promise<void> {
  for (const t of await baseTables(s.conn)) {
    if (s.parquetOnly.has(t))
      throw new Error(`derive created a serving table named like the parquet-only table ${t}; use replaceParquetTable`);
    await exportTable(s, t);
  }
  for (const [t, p] of s.hashing) s.tables[t] = await p;
}

/**
 * Phase 5a of a delta publish: a table neither the load nor derive changed is hard-linked from the previous
 * snapshot with its manifest entry; a cumulative table with appended rows becomes a directory table (the previous
 * files hard-linked, the new rows one more file; one file again past MAX_APPEND_FILES); any other changed table
 * is exported as in a full publish.
 */
async function exportDelta(s: PublishSession): Promise<void> {
  const d = s.delta!;
  // Two tables at a time, the second on its own connection: a table of one or two row groups is written by one
  // thread, so one COPY at a time left a core idle. (Appended cumulative tables read a temp table of the main
  // connection: always written there.)
  const extra = await s.db.connect();
  try {
    const queue = await baseTables(s.conn);
    const worker = async (conn: DuckDBConnection, main: boolean) => {
      for (;;) {
        const i = queue.findIndex((t) => main || !d.appended.has(t));
        if (i < 0) return;
        const [t] = queue.splice(i, 1);
        const started = Date.now();
        await exportDeltaTable(s, t!, conn);
        d.exportMs[t!] = Date.now() - started;
      }
    };
    await Promise.all([worker(s.conn, true), worker(extra, false)]);
  } finally {
    extra.closeSync();
  }
}

async function exportDeltaTable(s: PublishSession, t: string, conn: DuckDBConnection): Promise<void> {
  const d = s.delta!;
  {
    const prevTm = s.previous?.tables[t];
    const prevFiles = prevTm && s.prevDir ? tableFilePaths(s.prevDir, t, prevTm) : [];
    if (prevTm && !d.dirty.has(t)) {
      if (prevTm.files) await mkdir(path.join(s.tablesDir, t), { recursive: true });
      for (const f of prevFiles)
        await linkOrCopy(f, prevTm.files ? path.join(s.tablesDir, t, path.basename(f)) : path.join(s.tablesDir, `${t}.parquet`));
      s.tables[t] = prevTm;
      d.linked.push(t);
      return;
    }
    d.written.push(t);
    const appended = d.appended.get(t);
    if (prevTm && appended && prevFiles.length + 1 <= MAX_APPEND_FILES) {
      const dir = path.join(s.tablesDir, t);
      await mkdir(dir, { recursive: true });
      const files: Record<string, { sha256: string; bytes: number }> = {};
      const prevHashes = prevTm.files ?? { [`${t}.parquet`]: { sha256: prevTm.sha256, bytes: prevTm.bytes } };
      for (const [i, f] of prevFiles.entries()) {
        const name = `${String(i).padStart(5, '0')}.parquet`;
        await linkOrCopy(f, path.join(dir, name));
        files[name] = prevHashes[path.basename(f)]!;
      }
      const name = `${String(prevFiles.length).padStart(5, '0')}.parquet`;
      await conn.run(
        `COPY ${quoteIdentifier(appended)} TO ${quoteLiteral(path.join(dir, name))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
      );
      files[name] = await hashFile(path.join(dir, name));
      const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM ${qualified(s, t)}`);
      s.tables[t] = {
        rows: Number(n),
        sha256: hashCanonical(Object.fromEntries(Object.entries(files).map(([f, h]) => [f, h.sha256]))),
        bytes: Object.values(files).reduce((a, h) => a + h.bytes, 0),
        files,
      };
      return;
    }
    await exportTable(s, t, conn);
  }
}

/** One serving table exported to `tables/<table>.parquet` and hashed. */
async function exportTable(s: PublishSession, t: string, conn: DuckDBConnection = s.conn): Promise<void> {
  const file = path.join(s.tablesDir, `${t}.parquet`);
  await conn.run(`COPY ${qualified(s, t)} TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
  const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM ${qualified(s, t)}`);
  s.tables[t] = { rows: Number(n), ...(await hashFile(file)) };
}

/** Phase 5b: lookup indexes and a CHECKPOINT; returns the DuckDB version for the manifest. */
async function indexServing(s: PublishSession): Promise<string> {
  // Views over the staging paths must not outlive this connection (the directory is renamed at finalize).
  for (const t of s.parquetOnly) await s.conn.run(`DROP VIEW IF EXISTS temp.main.${quoteIdentifier(t)}`);
  await s.conn.run(domainIndexesSql(s.run.spec));
  await s.conn.run('CHECKPOINT');
  return String((await queryRows(s.conn, 'SELECT version() AS v'))[0].v);
}

/**
 * Phase 6: manifest.json, the staging directory renamed into `snapshots/`, CURRENT switched atomically, old
 * snapshots pruned. Parts are removed only after the switch: until then a retried publish still finds them
 * (tables/ holds hard links).
 */
async function finalizeSnapshot(
  s: PublishSession,
  opts: PublishOptions,
  duckdbVersion: string,
): Promise<{ manifest: SnapshotManifest; dir: string; pruned: string[] }> {
  const { run } = s;
  const { dataDir, domain } = run;
  const publishedAt = new Date();
  const snapshotId = newSnapshotId(run.runId, publishedAt);
  const sortedTables = Object.fromEntries(
    Object.keys(s.tables)
      .sort()
      .map((t) => [t, s.tables[t]]),
  );
  const manifest: SnapshotManifest = {
    snapshot_id: snapshotId,
    run_id: run.runId,
    published_at: publishedAt.toISOString(),
    domain,
    input_digest: opts.inputDigest ?? null,
    tables: sortedTables,
    meta: opts.meta ?? {},
    duckdb_version: duckdbVersion,
    ...(Object.keys(s.packed).length ? { packed: s.packed } : {}),
  };
  await writeFileAtomic(path.join(run.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  await mkdir(snapshotsDir(dataDir, domain), { recursive: true });
  const finalDir = snapshotDir(dataDir, domain, snapshotId);
  await rename(run.dir, finalDir);
  await opts.onStep?.('renamed');
  await writeCurrentPointer(dataDir, domain, { snapshot_id: snapshotId, run_id: run.runId, published_at: manifest.published_at });
  // The stable paths for outside readers (docs/operations.md#warehouse-paths), after CURRENT: they never name a
  // snapshot that is not published.
  await linkCurrentSnapshot(dataDir, domain, snapshotId);
  await writeCurrentSql(dataDir);
  if (!opts.keepParts) await rm(path.join(finalDir, 'parts'), { recursive: true, force: true });
  const pruned = await pruneSnapshots(dataDir, domain, opts.keep);
  return { manifest, dir: finalDir, pruned };
}

/** Publishes `run` as the domain's new snapshot, phase by phase (see the module comment), under the domain writer lock. */
export async function publishRun(run: StagingRun, opts: PublishOptions): Promise<PublishResult> {
  const release = await acquireWriterLock(run.dataDir, run.domain, run.runId, opts.lockTimeoutMs);
  const timings: Record<string, number> = {};
  let mark = Date.now();
  const lap = (name: string) => {
    const now = Date.now();
    timings[name] = now - mark;
    mark = now;
  };
  try {
    const s = await openServing(run, opts);
    let duckdbVersion: string;
    try {
      await linkParquetOnlyTables(s);
      lap('parquet_tables');
      if (s.delta) await loadDelta(s);
      else await loadServingTables(s);
      lap('load');
      await opts.onStep?.('loaded');
      if (opts.derive) await deriveTables(s, opts.derive);
      lap('derive');
      await writeLeafStore(s);
      lap('leaf_store');
      await opts.onStep?.('derived');
      if (s.delta) await exportDelta(s);
      else await exportServingTables(s);
      lap('export');
      await opts.onStep?.('exported');
      duckdbVersion = await indexServing(s);
      lap('index');
      await opts.onStep?.('indexed');
    } finally {
      closeServing(s);
    }
    // The size a whole build had: carried forward by delta publishes (see MAX_SERVING_GROWTH).
    await writeFile(
      path.join(run.dir, SERVING_BASE_FILE),
      `${JSON.stringify({ full_bytes: s.delta ? s.delta.fullBytes : (await stat(s.servingPath)).size })}\n`,
    );
    const done = await finalizeSnapshot(s, opts, duckdbVersion);
    lap('finalize');
    lastPublishTimings = { ...timings };
    lastPublishShape = s.delta
      ? { mode: 'delta', linked: s.delta.linked, written: s.delta.written, export_ms: s.delta.exportMs }
      : { mode: 'full', linked: [], written: Object.keys(s.tables) };
    return { ...done, timings, mode: s.delta ? 'delta' : 'full' };
  } finally {
    await release();
  }
}
