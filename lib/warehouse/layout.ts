/**
 * On-disk layout of the warehouse under DATA_DIR. Parquet files are the
 * warehouse of record; each domain publishes immutable snapshots and a
 * CURRENT pointer that is replaced atomically (write temp file, fsync, rename).
 *
 *   DATA_DIR/warehouse/<domain>/CURRENT                         {"snapshot_id", "run_id", "published_at"}
 *   DATA_DIR/warehouse/<domain>/snapshots/<snapshot_id>/manifest.json
 *   DATA_DIR/warehouse/<domain>/snapshots/<snapshot_id>/tables/<table>.parquet
 *   DATA_DIR/warehouse/<domain>/snapshots/<snapshot_id>/tables/<table>/<part>.parquet  (a parquet-only table of several parts)
 *   DATA_DIR/warehouse/<domain>/snapshots/<snapshot_id>/serving.duckdb   (read-only, indexed; not the parquet-only tables)
 *   DATA_DIR/warehouse/<domain>/snapshots/<snapshot_id>/packed/<name>.{tsv,idx}  (packed record stores, packed-store.ts)
 *   DATA_DIR/warehouse/<domain>/staging/<run_id>/parts/<table>/<key>.parquet
 *   DATA_DIR/warehouse/<domain>/writer.lock                      (held while publishing)
 *   DATA_DIR/warehouse/current/<domain>  → ../<domain>/snapshots/<snapshot_id>   (symlink, swapped by rename at publish)
 *   DATA_DIR/warehouse/current.sql                               (CREATE VIEW per table over current/<domain>/tables/…)
 *
 * The `current/` links and `current.sql` are the stable paths for DuckDB CLI, Python and other readers
 * (docs/operations.md#warehouse-paths); the service itself reads through CURRENT and the manifest.
 */
import { copyFile, link, rm } from 'node:fs/promises';
import path from 'node:path';

export function warehouseDir(dataDir: string): string {
  return path.join(dataDir, 'warehouse');
}
export function domainDir(dataDir: string, domain: string): string {
  return path.join(warehouseDir(dataDir), domain);
}
export function currentPointerPath(dataDir: string, domain: string): string {
  return path.join(domainDir(dataDir, domain), 'CURRENT');
}
/** The stable link to a domain's current snapshot directory (`warehouse/current/<domain>`). */
export function currentLinkPath(dataDir: string, domain: string): string {
  return path.join(warehouseDir(dataDir), 'current', domain);
}
/** CREATE VIEW statements over every domain's current tables (`duckdb -init DATA_DIR/warehouse/current.sql`). */
export function currentSqlPath(dataDir: string): string {
  return path.join(warehouseDir(dataDir), 'current.sql');
}
export function snapshotsDir(dataDir: string, domain: string): string {
  return path.join(domainDir(dataDir, domain), 'snapshots');
}
export function snapshotDir(dataDir: string, domain: string, snapshotId: string): string {
  return path.join(snapshotsDir(dataDir, domain), snapshotId);
}
export function stagingDir(dataDir: string, domain: string, runId: string): string {
  return path.join(domainDir(dataDir, domain), 'staging', runId);
}
export function writerLockPath(dataDir: string, domain: string): string {
  return path.join(domainDir(dataDir, domain), 'writer.lock');
}
/** Scratch space for DuckDB spills. */
export function tempDir(dataDir: string): string {
  return path.join(dataDir, 'tmp');
}

const SAFE_NAME = /^[a-z0-9][a-z0-9_.:-]{0,199}$/i;
/** Guards names used in paths (domains, run ids, part keys) against traversal. */
export function assertSafeName(kind: string, name: string): string {
  if (!SAFE_NAME.test(name) || name.includes('..')) throw new Error(`unsafe ${kind} name: ${JSON.stringify(name)}`);
  return name;
}

/** A file-system-safe key derived from any string (part keys from tickers, accessions, file names). */
export function toPartKey(s: string): string {
  const k = s
    .replace(/[^a-zA-Z0-9_.-]+/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 180);
  return k || 'part';
}

/** Hard-links `from` to `to` (same file system: a run directory or a previous snapshot); copies when linking is impossible (another file system, no link permission, too many links). */
export async function linkOrCopy(from: string, to: string): Promise<void> {
  await rm(to, { force: true });
  try {
    await link(from, to);
  } catch (e) {
    if (!['EXDEV', 'EPERM', 'EMLINK'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    await copyFile(from, to);
  }
}
