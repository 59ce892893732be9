/**
 * Snapshot pointers and manifests. CURRENT is replaced atomically (temp file,
 * fsync, rename, fsync of the directory), so a reader sees either the old or the
 * new snapshot, never half of one; a crash at any point leaves the previous
 * snapshot current and intact.
 */
import { mkdir, open, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { currentPointerPath, domainDir, snapshotDir, snapshotsDir } from './layout.ts';

export interface SnapshotPointer {
  snapshot_id: string;
  run_id: string;
  published_at: string;
}

export interface TableManifest {
  rows: number;
  /**
   * SHA-256 of the table's parquet file as published; for a table published as
   * a directory of part files (`files` set), SHA-256 of the RFC 8785 JSON of
   * `{file: sha256}` over those files.
   */
  sha256: string;
  bytes: number;
  /**
   * `parquet`: a parquet-only table (DomainSpec.parquetTables). Its file(s) are
   * the table; it is not in serving.duckdb and readers see it through a view.
   * Absent: the table lives in serving.duckdb and is exported to parquet.
   */
  storage?: 'parquet';
  /** Set when the table is the directory `tables/<table>/`: each part file's hash and size. */
  files?: Record<string, { sha256: string; bytes: number }>;
}

export interface SnapshotManifest extends SnapshotPointer {
  domain: string;
  /** SHA-256 over the sorted input content hashes; equal digests mean identical inputs. */
  input_digest: string | null;
  tables: Record<string, TableManifest>;
  /** Free-form facts about the run (counts, timings) for feeds and status pages. */
  meta: Record<string, unknown>;
  duckdb_version: string;
  /** Packed record stores built at publish (`packed/<name>.tsv` + `.idx`, see packed-store.ts). */
  packed?: Record<string, { records: number; bytes: number }>;
}

/**
 * Absolute paths of a table's parquet file(s) in a snapshot directory:
 * `tables/<table>.parquet`, or every file of `tables/<table>/` when the table
 * was published as a directory of parts.
 */
export function tableFilePaths(snapshotDirectory: string, table: string, tm: TableManifest | undefined): string[] {
  if (tm?.files)
    return Object.keys(tm.files)
      .sort()
      .map((f) => path.join(snapshotDirectory, 'tables', table, f));
  return [path.join(snapshotDirectory, 'tables', `${table}.parquet`)];
}

/** Reads a domain's CURRENT pointer, or null when nothing was published yet. */
export async function readCurrentPointer(dataDir: string, domain: string): Promise<SnapshotPointer | null> {
  try {
    return JSON.parse(await readFile(currentPointerPath(dataDir, domain), 'utf8')) as SnapshotPointer;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

export async function readManifest(dataDir: string, domain: string, snapshotId: string): Promise<SnapshotManifest> {
  return JSON.parse(await readFile(path.join(snapshotDir(dataDir, domain, snapshotId), 'manifest.json'), 'utf8')) as SnapshotManifest;
}

/** The manifest of the current snapshot, or null. */
export async function readCurrentManifest(dataDir: string, domain: string): Promise<SnapshotManifest | null> {
  const p = await readCurrentPointer(dataDir, domain);
  return p ? readManifest(dataDir, domain, p.snapshot_id) : null;
}

/** Writes a file durably and atomically: temp file, fsync, rename, fsync directory. */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  await fsyncDir(path.dirname(file));
}

export async function fsyncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

export async function writeCurrentPointer(dataDir: string, domain: string, pointer: SnapshotPointer): Promise<void> {
  await writeFileAtomic(currentPointerPath(dataDir, domain), JSON.stringify(pointer) + '\n');
}

/** Published snapshot ids of a domain, oldest first (ids sort by publish time). */
export async function listSnapshots(dataDir: string, domain: string): Promise<string[]> {
  const names = await readdir(snapshotsDir(dataDir, domain)).catch(() => [] as string[]);
  return names.filter((n) => !n.startsWith('.')).sort();
}

/** Deletes all but the newest `keep` snapshots; never the current one. Open readers keep their file handles (unlink semantics). */
export async function pruneSnapshots(dataDir: string, domain: string, keep: number): Promise<string[]> {
  const current = (await readCurrentPointer(dataDir, domain))?.snapshot_id;
  const all = await listSnapshots(dataDir, domain);
  const doomed = all.slice(0, Math.max(0, all.length - keep)).filter((id) => id !== current);
  for (const id of doomed) await rm(snapshotDir(dataDir, domain, id), { recursive: true, force: true });
  return doomed;
}

/**
 * Who runs a staging run in process: `staging/.owners/<run_id>.json` with the
 * host and PID (kept outside the run's folder, which becomes the snapshot).
 * Written by the in-process runner before its first part; BullMQ runs have
 * none (their jobs move between worker processes).
 */
interface StagingOwner {
  host: string;
  pid: number;
  started_at: string;
}

function ownersDir(dataDir: string, domain: string): string {
  return path.join(domainDir(dataDir, domain), 'staging', '.owners');
}

/** Records this process as the owner of an in-process run (see pruneStaging). */
export async function markStagingOwner(dataDir: string, domain: string, runId: string): Promise<void> {
  const dir = ownersDir(dataDir, domain);
  await mkdir(dir, { recursive: true });
  const owner: StagingOwner = { host: hostname(), pid: process.pid, started_at: new Date().toISOString() };
  await writeFile(path.join(dir, `${runId}.json`), `${JSON.stringify(owner)}\n`);
}

/** Removes the owner record of a finished run. */
export async function clearStagingOwner(dataDir: string, domain: string, runId: string): Promise<void> {
  await rm(path.join(ownersDir(dataDir, domain), `${runId}.json`), { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/**
 * Removes staging directories of runs other than `keepRunIds` that are
 * abandoned: run in process by a process of this host that is no longer
 * alive (a killed `npm run ingest`: cleaned by the next run at once), or, for
 * any run (BullMQ runs have no owner record), last touched longer ago than
 * `olderThanMs`.
 */
export async function pruneStaging(dataDir: string, domain: string, olderThanMs: number, keepRunIds: string[] = []): Promise<string[]> {
  const dir = path.join(domainDir(dataDir, domain), 'staging');
  const names = await readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  const host = hostname();
  for (const n of names) {
    if (n.startsWith('.') || keepRunIds.includes(n)) continue;
    const owner = await readFile(path.join(ownersDir(dataDir, domain), `${n}.json`), 'utf8')
      .then((t) => JSON.parse(t) as StagingOwner)
      .catch(() => null);
    const deadOwner = owner !== null && owner.host === host && owner.pid !== process.pid && !isAlive(owner.pid);
    const st = await stat(path.join(dir, n)).catch(() => null);
    if (st && (deadOwner || Date.now() - st.mtimeMs > olderThanMs)) {
      await rm(path.join(dir, n), { recursive: true, force: true });
      await clearStagingOwner(dataDir, domain, n);
      removed.push(n);
    }
  }
  // Owner records whose folder is gone (published or discarded by a run that ended before clearing its record).
  for (const f of await readdir(ownersDir(dataDir, domain)).catch(() => [] as string[])) {
    const runId = f.replace(/\.json$/, '');
    if (!names.includes(runId) && !keepRunIds.includes(runId)) await clearStagingOwner(dataDir, domain, runId);
  }
  return removed;
}

/** A sortable snapshot id: UTC timestamp plus a short run suffix. */
export function newSnapshotId(runId: string, now = new Date()): string {
  const ts = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})Z$/, '$1Z');
  return `${ts}-${runId.replace(/[^a-zA-Z0-9]/g, '').slice(-12)}`;
}
