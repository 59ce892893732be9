/**
 * Ad-hoc SQL over the parquet warehouse (`npm run sql`): an in-memory DuckDB
 * with one schema per domain and a view per table of that domain's current
 * snapshot (`registry.companies`), plus unqualified views for table names that
 * exist in only one domain. Every table, parquet-only or not, is read from the
 * snapshot's parquet (a directory table as the list of its part files).
 */
import { readdir } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { openDatabase, quoteIdentifier, quoteLiteral } from './duckdb.ts';
import { snapshotDir, warehouseDir } from './layout.ts';
import { readCurrentManifest, tableFilePaths } from './snapshot.ts';

export async function openWarehouseViews(
  dataDir: string,
  opts: { memoryLimit?: string } = {},
): Promise<{ db: DuckDBInstance; conn: DuckDBConnection; tables: string[] }> {
  const db = await openDatabase(':memory:', { memoryLimit: opts.memoryLimit ?? '1GB' });
  const conn = await db.connect();
  const domains = (await readdir(warehouseDir(dataDir)).catch(() => [] as string[])).sort();
  const owners = new Map<string, string[]>();
  const tables: string[] = [];
  for (const d of domains) {
    const m = await readCurrentManifest(dataDir, d).catch(() => null);
    if (!m) continue;
    await conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(d)}`);
    for (const t of Object.keys(m.tables)) {
      const files = tableFilePaths(snapshotDir(dataDir, d, m.snapshot_id), t, m.tables[t]);
      await conn.run(
        `CREATE VIEW ${quoteIdentifier(d)}.${quoteIdentifier(t)} AS SELECT * FROM read_parquet([${files.map(quoteLiteral).join(', ')}])`,
      );
      tables.push(`${d}.${t}`);
      owners.set(t, [...(owners.get(t) ?? []), d]);
    }
  }
  for (const [t, ds] of owners) {
    if (ds.length === 1)
      await conn.run(`CREATE VIEW ${quoteIdentifier(t)} AS SELECT * FROM ${quoteIdentifier(ds[0])}.${quoteIdentifier(t)}`);
  }
  return { db, conn, tables };
}
