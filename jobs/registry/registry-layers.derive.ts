/**
 * Publish-time derivation of the registry layers (timeline, earnings
 * calendar, filing index before `company_lookup`; people and signal hits
 * after it, since they carry tickers). The SQL is in the `.sql` files beside
 * this module; the 8-K item table comes from `ingest/edgar/eight-k.ts` so the
 * two never drift.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import { EIGHT_K_ITEMS, PRE_2004_ITEMS } from '../../ingest/edgar/eight-k.ts';

/** Loads the 8-K item map (current items and pre-2004 numbers) into a temporary table. */
async function loadItemMap(conn: DuckDBConnection): Promise<void> {
  await conn.run(`CREATE OR REPLACE TEMP TABLE eight_k_item_map (item_code VARCHAR, item VARCHAR, title VARCHAR, event_type VARCHAR)`);
  const stmt = await conn.prepare(`INSERT INTO eight_k_item_map VALUES ($code, $item, $title, $event)`);
  const rows: Array<[string, string]> = [
    ...Object.keys(EIGHT_K_ITEMS).map((k) => [k, k] as [string, string]),
    ...Object.entries(PRE_2004_ITEMS),
  ];
  for (const [code, item] of rows) {
    const def = EIGHT_K_ITEMS[item];
    stmt.bindVarchar(1, code);
    stmt.bindVarchar(2, item);
    stmt.bindVarchar(3, def.title);
    stmt.bindVarchar(4, def.event);
    await stmt.run();
  }
}

export async function deriveLayers(conn: DuckDBConnection): Promise<void> {
  await loadItemMap(conn);
  await conn.run(
    `CREATE OR REPLACE TABLE documents AS SELECT * FROM documents QUALIFY row_number() OVER (PARTITION BY content_sha256 ORDER BY document) = 1`,
  );
  await conn.run(loadSql('./derive-layers.sql', import.meta.url));
  await conn.run(loadSql('./derive-product-launches.sql', import.meta.url));
}

export async function deriveAfterLookup(conn: DuckDBConnection): Promise<void> {
  await conn.run(loadSql('./derive-people-signals.sql', import.meta.url));
}
