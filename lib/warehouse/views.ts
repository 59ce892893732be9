/**
 * Ad-hoc SQL over the parquet warehouse: one schema per domain and a view per table of that domain's current
 * snapshot (`registry.companies`), plus unqualified views for table names that exist in only one domain. Every
 * table, parquet-only or not, is read from the snapshot's parquet (a directory table as the list of its part files).
 *
 * Two users, one naming rule (`warehouseViewStatements`), so their table names are the same:
 * - `proofline sql` (`openWarehouseViews`): an in-memory DuckDB with views pinned to the files of the current manifests;
 * - `DATA_DIR/warehouse/current.sql` (`writeCurrentSql`, rewritten at every publish): the same views over the stable
 *   `warehouse/current/<domain>` links (`linkCurrentSnapshot`), for `duckdb -init DATA_DIR/warehouse/current.sql`
 *   or Python's `duckdb.sql(open(...).read())`. DuckDB binds a view's files when it is queried, so a session opened
 *   before a publish reads the new snapshot on its next query. Paths are absolute (the file works from any directory).
 */
import { mkdir, readdir, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { openDatabase, quoteIdentifier, quoteLiteral } from './duckdb.ts';
import { currentLinkPath, currentSqlPath, snapshotDir, warehouseDir } from './layout.ts';
import { readCurrentManifest, tableFilePaths, writeFileAtomic } from './snapshot.ts';

/** The statements creating the views, and the `domain.table` names they create. */
export async function warehouseViewStatements(
  dataDir: string,
  via: 'snapshot' | 'current',
): Promise<{ statements: string[]; tables: string[]; snapshots: Record<string, string> }> {
  const names = await readdir(warehouseDir(dataDir), { withFileTypes: true }).catch(() => []);
  const domains = names
    .filter((d) => d.isDirectory() && d.name !== 'current')
    .map((d) => d.name)
    .sort();
  const owners = new Map<string, string[]>();
  const statements: string[] = [];
  const tables: string[] = [];
  const snapshots: Record<string, string> = {};
  for (const d of domains) {
    const m = await readCurrentManifest(dataDir, d).catch(() => null);
    if (!m) continue;
    snapshots[d] = m.snapshot_id;
    statements.push(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(d)};`);
    for (const t of Object.keys(m.tables)) {
      const files =
        via === 'snapshot'
          ? tableFilePaths(snapshotDir(dataDir, d, m.snapshot_id), t, m.tables[t])
          : m.tables[t]?.files
            ? [path.join(currentLinkPath(dataDir, d), 'tables', t, '*.parquet')]
            : [path.join(currentLinkPath(dataDir, d), 'tables', `${t}.parquet`)];
      statements.push(
        `CREATE OR REPLACE VIEW ${quoteIdentifier(d)}.${quoteIdentifier(t)} AS SELECT * FROM read_parquet([${files.map(quoteLiteral).join(', ')}]);`,
      );
      tables.push(`${d}.${t}`);
      owners.set(t, [...(owners.get(t) ?? []), d]);
    }
  }
  for (const [t, ds] of owners) {
    if (ds.length === 1)
      statements.push(`CREATE OR REPLACE VIEW ${quoteIdentifier(t)} AS SELECT * FROM ${quoteIdentifier(ds[0]!)}.${quoteIdentifier(t)};`);
  }
  return { statements, tables, snapshots };
}

export async function openWarehouseViews(
  dataDir: string,
  opts: { memoryLimit?: string } = {},
): Promise<{ db: DuckDBInstance; conn: DuckDBConnection; tables: string[] }> {
  const db = await openDatabase(':memory:', { memoryLimit: opts.memoryLimit ?? '1GB' });
  const conn = await db.connect();
  const { statements, tables } = await warehouseViewStatements(dataDir, 'snapshot');
  for (const s of statements) await conn.run(s);
  return { db, conn, tables };
}

/** Points `warehouse/current/<domain>` at the snapshot: a new relative symlink renamed over the old one (atomic). */
export async function linkCurrentSnapshot(dataDir: string, domain: string, snapshotId: string): Promise<void> {
  const link = currentLinkPath(dataDir, domain);
  await mkdir(path.dirname(link), { recursive: true });
  const tmp = `${link}.${process.pid}.tmp`;
  await rm(tmp, { force: true });
  await symlink(path.join('..', domain, 'snapshots', snapshotId), tmp);
  await rename(tmp, link);
}

/** Rewrites `warehouse/current.sql` from every domain's current manifest (temp file + rename). */
export async function writeCurrentSql(dataDir: string): Promise<string> {
  const { statements, snapshots } = await warehouseViewStatements(dataDir, 'current');
  const text = [
    "-- Proofline warehouse: a view per table of every domain's current snapshot, the table names of `proofline sql`.",
    '-- Written at every publish (lib/warehouse/views.ts); do not edit. Use: duckdb -init <this file>, or in Python',
    '-- duckdb.sql(open(<this file>).read()). Paths go through the warehouse/current/<domain> links, so views opened',
    '-- before a publish read the new snapshot on their next query.',
    ...Object.entries(snapshots).map(([d, id]) => `-- ${d}: snapshot ${id}`),
    ...statements,
    '',
  ].join('\n');
  const file = currentSqlPath(dataDir);
  await writeFileAtomic(file, text);
  return file;
}
