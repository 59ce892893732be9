/**
 * Publishing a staging run as a new immutable snapshot of its domain:
 *
 *  1. take the domain writer lock (one publisher per domain);
 *  2. parquet-only tables (DomainSpec.parquetTables): hard-link each part into
 *     `tables/` as the table's file(s) (rewritten to the DDL only when a part's
 *     columns differ), hash them; they never enter serving.duckdb and are seen
 *     by `derive` (and later by readers) through views over read_parquet;
 *  3. build `serving.duckdb` in the staging directory: domain DDL, rows from the
 *     run's parts, tables carried forward from the previous snapshot, the
 *     cumulative `sources` and `origin_leaves`, then the `derive` step (which may
 *     also replace a parquet-only table, make files the children wrote one, and
 *     write packed record stores);
 *  4. export every serving table to zstd parquet (the warehouse of record) and hash it;
 *  5. create the lookup indexes, CHECKPOINT, close;
 *  6. write manifest.json, rename the directory into `snapshots/`, switch CURRENT
 *     atomically, prune old snapshots, remove the run's parts.
 *
 * Parts are hard-linked, never moved, and removed only after the CURRENT
 * switch, so a crash (or a retried publish) before step 6's switch leaves the
 * previous snapshot current and untouched and the run still publishable; the
 * next run cleans an abandoned staging directory.
 */
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { createSha256Stream, hashCanonical } from '../hash.ts';
import { domainIndexesSql, domainTablesSql } from './domain.ts';
import { openDatabase, queryRows, quoteIdentifier, quoteLiteral } from './duckdb.ts';
import { assertSafeName, snapshotDir, snapshotsDir, tempDir } from './layout.ts';
import { acquireWriterLock } from './lock.ts';
import { writePackedStore, type PackedInfo } from './packed-store.ts';
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
import type { StagingRun } from './staging.ts';

/** Tables that accumulate across snapshots instead of being replaced. */
const CUMULATIVE = new Set(['sources', 'origin_leaves']);
/** Tables that describe only the run that published them. */
const PER_RUN = new Set(['rejects']);

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
   * text); listed in the manifest's `packed` and opened by readers.
   */
  writePacked(name: string, selectSql: string): Promise<PackedInfo>;
  /**
   * Makes `files` (zstd parquet the run's children already wrote, with exactly the table's DDL columns, in this
   * order) the parquet-only table `table`: publish hard-links them as `tables/<table>/NNNNN.parquet` (a directory
   * table, read in file order) and hashes them, instead of loading and copying the rows again. Checked: same
   * columns and types. For a big table whose parts are already final (quotes: quote_bars on the fast path).
   */
  linkParquetTable(table: string, files: string[]): Promise<void>;
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
  /** Test hook: called between steps so a test can simulate a crash. */
  onStep?: (step: 'loaded' | 'derived' | 'exported' | 'indexed' | 'renamed') => Promise<void> | void;
}

export interface PublishResult {
  manifest: SnapshotManifest;
  dir: string;
  pruned: string[];
  /** Milliseconds per publish phase (parquet_tables, load, derive, export, index, finalize). */
  timings: Record<string, number>;
}

/** Phase timings of the last publish in this process (benchmarks report them). */
export let lastPublishTimings: Record<string, number> = {};

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
  return ddl.map((c) => (have.has(c.name) ? `CAST(${quoteIdentifier(c.name)} AS ${c.type}) AS ${quoteIdentifier(c.name)}` : `CAST(NULL AS ${c.type}) AS ${quoteIdentifier(c.name)}`)).join(', ');
}

const sameColumns = (a: DdlColumn[], b: DdlColumn[]) => a.length === b.length && a.every((c, i) => c.name === b[i].name && c.type === b[i].type);

/** Hard-links `from` to `to` (same file system: the run directory or a previous snapshot); copies when linking is impossible. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  await rm(to, { force: true });
  try {
    await link(from, to);
  } catch (e) {
    if (!['EXDEV', 'EPERM', 'EMLINK'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    await copyFile(from, to);
  }
}

async function sha256File(file: string): Promise<{ sha256: string; bytes: number }> {
  const h = createSha256Stream();
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest();
}

export async function publishRun(run: StagingRun, opts: PublishOptions): Promise<PublishResult> {
  const { dataDir, domain } = run;
  const release = await acquireWriterLock(dataDir, domain, run.runId, opts.lockTimeoutMs);
  const timings: Record<string, number> = {};
  let mark = Date.now();
  const lap = (name: string) => {
    const now = Date.now();
    timings[name] = now - mark;
    mark = now;
  };
  try {
    const previous = await readCurrentManifest(dataDir, domain);
    const prevDir = previous ? snapshotDir(dataDir, domain, previous.snapshot_id) : null;
    const previousTable = (t: string) => {
      const tm = previous?.tables[t];
      if (!tm || !prevDir) return null;
      return tm.files ? path.join(prevDir, 'tables', t, '*.parquet') : path.join(prevDir, 'tables', `${t}.parquet`);
    };

    const servingPath = path.join(run.dir, 'serving.duckdb');
    await rm(servingPath, { force: true });
    await rm(`${servingPath}.wal`, { force: true });
    const tablesDir = path.join(run.dir, 'tables');
    await rm(tablesDir, { recursive: true, force: true });
    await mkdir(tablesDir, { recursive: true });
    const packedDir = path.join(run.dir, 'packed');
    await rm(packedDir, { recursive: true, force: true });
    await mkdir(tempDir(dataDir), { recursive: true });

    const db = await openDatabase(servingPath, {
      memoryLimit: opts.memoryLimit ?? '1GB',
      threads: opts.threads ?? 2,
      tempDirectory: tempDir(dataDir),
    });
    const conn = await db.connect();
    const tables: Record<string, TableManifest> = {};
    const packed: Record<string, PackedInfo> = {};
    const parquetOnly = new Set(run.spec.parquetTables ?? []);
    const replace = new Set(run.spec.replaceTables ?? []);
    /** Parquet-only table → its files (absolute, in tables/) and DDL columns. */
    const parquetFiles = new Map<string, string[]>();
    const parquetDdl = new Map<string, DdlColumn[]>();
    const hashing = new Map<string, Promise<TableManifest>>();

    const viewOver = async (t: string) => {
      await conn.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(t)} AS SELECT * FROM read_parquet([${parquetFiles.get(t)!.map(quoteLiteral).join(', ')}])`);
    };
    // Hashing (Node) overlaps with DuckDB's work on the next steps.
    const hashTable = async (t: string) => {
      const files = parquetFiles.get(t)!;
      const isDir = files.length !== 1 || path.basename(files[0]) !== `${t}.parquet`;
      // Row count from the parquet footers (one connection runs one statement at a time: not inside the promise).
      const [{ n }] = await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM read_parquet([${files.map(quoteLiteral).join(', ')}])`);
      const p = (async (): Promise<TableManifest> => {
        const hashed = await Promise.all(files.map(async (f) => [path.basename(f), await sha256File(f)] as const));
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
      hashing.set(t, p);
    };

    const replaceParquetTable = async (t: string, selectSql: string, ropts: { columns?: 'ddl' | 'query'; rowGroupSize?: number } = {}) => {
      if (!parquetOnly.has(t)) throw new Error(`${t} is not a parquet-only table of ${domain}`);
      await hashing.get(t)?.catch(() => undefined);
      const ddl = parquetDdl.get(t)!;
      const out = path.join(tablesDir, `${t}.parquet`);
      const tmp = `${out}.new`;
      const projection = ropts.columns === 'query' ? '*' : ddlProjection(ddl, new Set(ddl.map((c) => c.name)));
      await conn.run(`COPY (SELECT ${projection} FROM (${selectSql})) TO ${quoteLiteral(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ropts.rowGroupSize ?? 122880})`);
      await rm(path.join(tablesDir, t), { recursive: true, force: true });
      await rename(tmp, out);
      parquetFiles.set(t, [out]);
      await viewOver(t);
      await hashTable(t);
    };

    const linkParquetTable = async (t: string, given: string[]) => {
      if (!parquetOnly.has(t)) throw new Error(`${t} is not a parquet-only table of ${domain}`);
      if (given.length === 0) throw new Error(`no files given for ${t}`);
      await hashing.get(t)?.catch(() => undefined);
      if (!sameColumns(await parquetColumns(conn, given), parquetDdl.get(t)!)) throw new Error(`files given for ${t} do not have the table's columns`);
      await rm(path.join(tablesDir, `${t}.parquet`), { force: true });
      await rm(path.join(tablesDir, t), { recursive: true, force: true });
      await mkdir(path.join(tablesDir, t), { recursive: true });
      const files: string[] = [];
      for (const [i, src] of given.entries()) {
        const out = path.join(tablesDir, t, `${String(i).padStart(5, '0')}.parquet`);
        await linkOrCopy(src, out);
        files.push(out);
      }
      parquetFiles.set(t, files);
      await viewOver(t);
      await hashTable(t);
    };

    try {
      await conn.run(`SET preserve_insertion_order = false`);
      await conn.run(domainTablesSql(run.spec));
      const withParts = new Set(await run.tablesWithParts());

      // Parquet-only tables: the parts become the table files; DDL tables dropped, views created.
      for (const t of [...parquetOnly].sort()) {
        const ddl = (await queryRows(conn, `SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = $t ORDER BY ordinal_position`, { t })).map((r) => ({ name: String(r.column_name), type: String(r.data_type) }));
        if (ddl.length === 0) throw new Error(`parquet-only table ${t} is not defined in domain ${domain}`);
        parquetDdl.set(t, ddl);
        const partDir = path.join(run.dir, 'parts', assertSafeName('table', t));
        const parts = withParts.has(t) ? (await readdir(partDir)).filter((f) => f.endsWith('.parquet')).sort().map((f) => path.join(partDir, f)) : [];
        const prev = previous?.tables[t] && prevDir && !replace.has(t) ? tableFilePaths(prevDir, t, previous.tables[t]) : [];
        const sources = parts.length ? parts : prev;
        const files: string[] = [];
        if (sources.length === 0) {
          const out = path.join(tablesDir, `${t}.parquet`);
          await conn.run(`COPY (SELECT * FROM ${quoteIdentifier(t)} LIMIT 0) TO ${quoteLiteral(out)} (FORMAT parquet, COMPRESSION zstd)`);
          files.push(out);
        } else {
          if (sources.length > 1) await mkdir(path.join(tablesDir, t), { recursive: true });
          for (const src of sources) {
            const out = sources.length === 1 ? path.join(tablesDir, `${t}.parquet`) : path.join(tablesDir, t, path.basename(src));
            const have = await parquetColumns(conn, [src]);
            if (sameColumns(have, ddl)) await linkOrCopy(src, out);
            else {
              await conn.run(`COPY (SELECT ${ddlProjection(ddl, new Set(have.map((c) => c.name)))} FROM read_parquet(${quoteLiteral(src)})) TO ${quoteLiteral(`${out}.tmp`)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
              await rename(`${out}.tmp`, out);
            }
            files.push(out);
          }
        }
        await conn.run(`DROP TABLE ${quoteIdentifier(t)}`);
        parquetFiles.set(t, files);
        await viewOver(t);
        await hashTable(t);
      }
      lap('parquet_tables');

      const allTables = (await queryRows(conn, `SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`)).map((r) => String(r.table_name));
      for (const t of allTables) {
        const q = quoteIdentifier(t);
        const parts = withParts.has(t) ? quoteLiteral(path.join(run.dir, 'parts', t, '*.parquet')) : null;
        const prev = previousTable(t);
        if (t === 'origin_leaves') {
          const sources = [prev ? `SELECT *, 0 AS _prio FROM read_parquet(${quoteLiteral(prev)})` : null, parts ? `SELECT *, 1 AS _prio FROM read_parquet(${parts}, union_by_name = true)` : null].filter(Boolean);
          if (sources.length) {
            await conn.run(`INSERT INTO ${q} BY NAME SELECT * EXCLUDE (_prio) FROM (${sources.join(' UNION ALL BY NAME ')}) QUALIFY row_number() OVER (PARTITION BY leaf_hash ORDER BY _prio, first_run_id) = 1`);
          }
        } else if (CUMULATIVE.has(t)) {
          if (prev) await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${quoteLiteral(prev)})`);
          if (parts) await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${parts}, union_by_name = true)`);
        } else if (parts) {
          await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${parts}, union_by_name = true)`);
        } else if (prev && !replace.has(t) && !PER_RUN.has(t)) {
          await conn.run(`INSERT INTO ${q} BY NAME SELECT * FROM read_parquet(${quoteLiteral(prev)}, union_by_name = true)`);
        }
      }
      lap('load');
      await opts.onStep?.('loaded');

      const writePacked = async (name: string, selectSql: string) => {
        assertSafeName('packed store', name);
        await mkdir(packedDir, { recursive: true });
        const info = await writePackedStore(conn, selectSql, packedDir, name);
        packed[name] = info;
        return info;
      };
      if (opts.derive) await opts.derive(conn, { run, previous, previousTable, parquetTables: parquetOnly, replaceParquetTable, linkParquetTable, writePacked });
      lap('derive');
      await opts.onStep?.('derived');

      const finalTables = (await queryRows(conn, `SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`)).map((r) => String(r.table_name));
      for (const t of finalTables) {
        if (parquetOnly.has(t)) throw new Error(`derive created a serving table named like the parquet-only table ${t}; use replaceParquetTable`);
        const file = path.join(tablesDir, `${t}.parquet`);
        await conn.run(`COPY ${quoteIdentifier(t)} TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
        const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM ${quoteIdentifier(t)}`);
        tables[t] = { rows: Number(n), ...(await sha256File(file)) };
      }
      for (const [t, p] of hashing) tables[t] = await p;
      lap('export');
      await opts.onStep?.('exported');

      // Views over the staging paths must not outlive this connection (the directory is renamed below).
      for (const t of parquetOnly) await conn.run(`DROP VIEW IF EXISTS temp.main.${quoteIdentifier(t)}`);
      await conn.run(domainIndexesSql(run.spec));
      await conn.run('CHECKPOINT');
      lap('index');
      await opts.onStep?.('indexed');
      var duckdbVersion = String((await queryRows(conn, 'SELECT version() AS v'))[0].v);
    } finally {
      conn.closeSync();
      db.closeSync();
    }

    const publishedAt = new Date();
    const snapshotId = newSnapshotId(run.runId, publishedAt);
    const sortedTables = Object.fromEntries(Object.keys(tables).sort().map((t) => [t, tables[t]]));
    const manifest: SnapshotManifest = {
      snapshot_id: snapshotId,
      run_id: run.runId,
      published_at: publishedAt.toISOString(),
      domain,
      input_digest: opts.inputDigest ?? null,
      tables: sortedTables,
      meta: opts.meta ?? {},
      duckdb_version: duckdbVersion,
      ...(Object.keys(packed).length ? { packed } : {}),
    };
    await writeFileAtomic(path.join(run.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    await mkdir(snapshotsDir(dataDir, domain), { recursive: true });
    const finalDir = snapshotDir(dataDir, domain, snapshotId);
    await rename(run.dir, finalDir);
    await opts.onStep?.('renamed');
    await writeCurrentPointer(dataDir, domain, { snapshot_id: snapshotId, run_id: run.runId, published_at: manifest.published_at });
    // Parts are removed only now: until the switch, a retried publish still finds them (tables/ holds hard links).
    await rm(path.join(finalDir, 'parts'), { recursive: true, force: true });
    const pruned = await pruneSnapshots(dataDir, domain, opts.keep);
    lap('finalize');
    lastPublishTimings = { ...timings };
    return { manifest, dir: finalDir, pruned, timings };
  } finally {
    await release();
  }
}

/** True when a path exists. */
export async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}
