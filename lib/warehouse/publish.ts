/**
 * Publishing a staging run as a new immutable snapshot of its domain:
 *
 *  1. take the domain writer lock (one publisher per domain);
 *  2. build `serving.duckdb` in the staging directory: domain DDL, rows from the
 *     run's parts, tables carried forward from the previous snapshot, the
 *     cumulative `sources` and `origin_leaves`, then the `derive` step;
 *  3. export every table to zstd parquet (the warehouse of record) and hash it;
 *  4. create the lookup indexes, CHECKPOINT, close;
 *  5. write manifest.json, rename the directory into `snapshots/`, switch CURRENT
 *     atomically, prune old snapshots.
 *
 * A crash before step 5's CURRENT switch leaves the previous snapshot current
 * and untouched; the next run cleans the abandoned staging directory.
 */
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { createSha256Stream } from '../hash.ts';
import { domainIndexesSql, domainTablesSql } from './domain.ts';
import { openDatabase, queryRows, quoteIdentifier, quoteLiteral } from './duckdb.ts';
import { snapshotDir, snapshotsDir, tempDir } from './layout.ts';
import { acquireWriterLock } from './lock.ts';
import {
  newSnapshotId,
  pruneSnapshots,
  readCurrentManifest,
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
  /** Absolute path of a table's parquet in the previous snapshot, or null. */
  previousTable(table: string): string | null;
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
}

async function sha256File(file: string): Promise<{ sha256: string; bytes: number }> {
  const h = createSha256Stream();
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest();
}

export async function publishRun(run: StagingRun, opts: PublishOptions): Promise<PublishResult> {
  const { dataDir, domain } = run;
  const release = await acquireWriterLock(dataDir, domain, run.runId, opts.lockTimeoutMs);
  try {
    const previous = await readCurrentManifest(dataDir, domain);
    const prevDir = previous ? snapshotDir(dataDir, domain, previous.snapshot_id) : null;
    const previousTable = (t: string) => (previous && prevDir && previous.tables[t] ? path.join(prevDir, 'tables', `${t}.parquet`) : null);

    const servingPath = path.join(run.dir, 'serving.duckdb');
    await rm(servingPath, { force: true });
    await rm(`${servingPath}.wal`, { force: true });
    const tablesDir = path.join(run.dir, 'tables');
    await rm(tablesDir, { recursive: true, force: true });
    await mkdir(tablesDir, { recursive: true });
    await mkdir(tempDir(dataDir), { recursive: true });

    const db = await openDatabase(servingPath, {
      memoryLimit: opts.memoryLimit ?? '1GB',
      threads: opts.threads ?? 2,
      tempDirectory: tempDir(dataDir),
    });
    const conn = await db.connect();
    const tables: Record<string, TableManifest> = {};
    try {
      await conn.run(`SET preserve_insertion_order = false`);
      await conn.run(domainTablesSql(run.spec));
      const allTables = (await queryRows(conn, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`)).map((r) => String(r.table_name));
      const withParts = new Set(await run.tablesWithParts());
      const replace = new Set(run.spec.replaceTables ?? []);

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
      await opts.onStep?.('loaded');

      if (opts.derive) await opts.derive(conn, { run, previous, previousTable });
      await opts.onStep?.('derived');

      const finalTables = (await queryRows(conn, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`)).map((r) => String(r.table_name));
      for (const t of finalTables) {
        const file = path.join(tablesDir, `${t}.parquet`);
        await conn.run(`COPY ${quoteIdentifier(t)} TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
        const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM ${quoteIdentifier(t)}`);
        tables[t] = { rows: Number(n), ...(await sha256File(file)) };
      }
      await opts.onStep?.('exported');

      await conn.run(domainIndexesSql(run.spec));
      await conn.run('CHECKPOINT');
      await opts.onStep?.('indexed');
      var duckdbVersion = String((await queryRows(conn, 'SELECT version() AS v'))[0].v);
    } finally {
      conn.closeSync();
      db.closeSync();
    }

    const publishedAt = new Date();
    const snapshotId = newSnapshotId(run.runId, publishedAt);
    const manifest: SnapshotManifest = {
      snapshot_id: snapshotId,
      run_id: run.runId,
      published_at: publishedAt.toISOString(),
      domain,
      input_digest: opts.inputDigest ?? null,
      tables,
      meta: opts.meta ?? {},
      duckdb_version: duckdbVersion,
    };
    await writeFileAtomic(path.join(run.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    await rm(path.join(run.dir, 'parts'), { recursive: true, force: true });
    await mkdir(snapshotsDir(dataDir, domain), { recursive: true });
    const finalDir = snapshotDir(dataDir, domain, snapshotId);
    await rename(run.dir, finalDir);
    await opts.onStep?.('renamed');
    await writeCurrentPointer(dataDir, domain, { snapshot_id: snapshotId, run_id: run.runId, published_at: manifest.published_at });
    const pruned = await pruneSnapshots(dataDir, domain, opts.keep);
    return { manifest, dir: finalDir, pruned };
  } finally {
    await release();
  }
}

/** True when a path exists. */
export async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}
