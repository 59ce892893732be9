/**
 * Packed-store records computed in Node, handed back to DuckDB: the stores' writer (`writePacked`) reads records
 * as a SELECT of `(k INTEGER, v VARCHAR)`. Used by the name hits and red-flag lists walks (issue 22 item 4).
 */
import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Replaces temp table `table` (a name of ours, never input) with `records` through an appender, and returns the
 * SELECT that reads them back in the order given.
 */
export async function writeRecordTable(
  conn: DuckDBConnection,
  table: string,
  records: Iterable<readonly [number, string]>,
): Promise<string> {
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${table} (k INTEGER, v VARCHAR)`);
  const app = await conn.createAppender(table, 'main', 'temp');
  try {
    for (const [k, v] of records) {
      app.appendInteger(k);
      app.appendVarchar(v);
      app.endRow();
    }
  } finally {
    app.closeSync();
  }
  return `SELECT k, v FROM ${table}`;
}
