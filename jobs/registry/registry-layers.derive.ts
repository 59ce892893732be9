/**
 * Publish-time derivation of the registry layers (timeline, earnings
 * calendar, filing index before `company_lookup`; people and signal hits
 * after it, since they carry tickers). The SQL is in the `.sql` files beside
 * this module; the 8-K item table comes from `ingest/edgar/eight-k.ts` so the
 * two never drift.
 *
 * A delta publish (lib/warehouse/publish.ts) runs the same SQL for the changed companies only
 * (`deriveRegistryDelta`).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadSql, queryRows, quoteIdentifier } from '../../lib/warehouse/duckdb.ts';
import type { DeltaContext } from '../../lib/warehouse/publish.ts';
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
  await conn.run(loadSql('./derive-link-documents.sql', import.meta.url));
  await deriveLayerTables(conn);
}

/** Timeline, earnings calendar, filing index and product launches (after the documents are linked). */
async function deriveLayerTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(loadSql('./derive-layers.sql', import.meta.url));
  await conn.run(loadSql('./derive-product-launches.sql', import.meta.url));
}

export async function deriveAfterLookup(conn: DuckDBConnection): Promise<void> {
  await conn.run(loadSql('./derive-people-signals.sql', import.meta.url));
}

/** Tables derived at publish (the registry domain's replaceTables), each with a `cik` column. */
const DERIVED = ['timeline', 'earnings_calendar', 'filing_index', 'company_lookup', 'people', 'signal_hits'];
/** Tables the document linking (derive-link-documents.sql) fills in place, with the columns it may fill. */
const LINKED: Record<string, string[]> = {
  documents: ['cik', 'accession', 'filing_date'],
  doc_events: ['cik', 'accession', 'filing_date'],
  people_roles: ['cik', 'accession', 'as_of'],
  profile_facts: ['cik', 'accession'],
  signals: ['cik', 'accession'],
};

/**
 * The registry derive on a delta publish: the serving database holds the previous snapshot's rows changed by the
 * run, and `_delta_keys` the CIKs of every row removed or added. Every derived row belongs to one CIK and is
 * computed from rows of that CIK (or without one) only, with one exception: `company_lookup` reads the ticker
 * files across companies (a ticker moving between CIKs), so a changed ticker file re-derives every company.
 *
 *  1. duplicates among the changed companies' rows are dropped (as the full derive's dedup does);
 *  2. documents are linked to their filings over the whole tables (derive-link-documents.sql); the CIKs of rows
 *     it linked join the changed set;
 *  3. the same derive SQL runs with each base table shadowed by a temp view of the changed CIKs' rows and rows
 *     without a CIK (`ticker_snapshots` unrestricted) and each derived table by an empty temp table;
 *  4. the derived tables' rows of those CIKs (and without one) are replaced by the temp tables' rows.
 * The incremental test checks the result equals a full run's, table by table.
 */
export async function deriveRegistryDelta(conn: DuckDBConnection, delta: DeltaContext): Promise<void> {
  if (delta.changed.size === 0) return;
  const main = (t: string) => `${quoteIdentifier(delta.catalog)}.main.${quoteIdentifier(t)}`;
  const keys = `(SELECT k FROM ${delta.keysTable})`;
  const cikTables = (
    await queryRows(
      conn,
      `SELECT DISTINCT table_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' AND column_name = 'cik' ORDER BY 1`,
    )
  )
    .map((r) => String(r.table_name))
    .filter((t) => !DERIVED.includes(t));
  if (delta.changed.has('ticker_snapshots'))
    for (const t of cikTables) await conn.run(`INSERT INTO ${delta.keysTable} SELECT DISTINCT cik FROM ${main(t)} WHERE cik IS NOT NULL`);
  const mine = `(cik IS NULL OR cik IN ${keys})`;
  const dropDuplicates = async (t: string, partition: string, order: string) => {
    const r = await conn.run(
      `DELETE FROM ${main(t)} WHERE rowid IN (SELECT rowid FROM ${main(t)} WHERE ${mine} QUALIFY row_number() OVER (PARTITION BY ${partition} ORDER BY ${order}) > 1)`,
    );
    if (Number(r.rowsChanged) > 0) delta.touch(t);
  };
  await dropDuplicates('companies', 'cik', 'name');
  await dropDuplicates('filings', 'cik, accession', 'filing_date');
  await loadItemMap(conn);
  await dropDuplicates('documents', 'content_sha256', 'document');
  // Rows the linking may fill, with their state before it: the rows whose state it changes are re-derived under
  // the CIK they get. (Documents that never match a filing stay unlinked night after night; they are not changes.)
  const state = (t: string) => `hash(list(struct_pack(${LINKED[t]!.join(', ')}) ORDER BY ${LINKED[t]!.join(', ')}))`;
  const unlinked = (t: string) => LINKED[t]!.map((c) => `${c} IS NULL`).join(' OR ');
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE _unlinked AS ${Object.keys(LINKED)
      .map(
        (t) =>
          `SELECT '${t}' AS t, content_sha256, ${state(t)} AS h FROM ${main(t)} WHERE content_sha256 IN (SELECT content_sha256 FROM ${main(t)} WHERE ${unlinked(t)}) GROUP BY content_sha256`,
      )
      .join(' UNION ALL ')}`,
  );
  const [{ n }] = await queryRows(conn, 'SELECT count(*)::INTEGER AS n FROM _unlinked');
  if (Number(n) > 0) {
    await conn.run(loadSql('./derive-link-documents.sql', import.meta.url));
    for (const t of Object.keys(LINKED)) {
      await conn.run(
        `CREATE OR REPLACE TEMP TABLE _linked AS
         SELECT a.content_sha256 FROM (SELECT content_sha256, ${state(t)} AS h FROM ${main(t)}
                                       WHERE content_sha256 IN (SELECT content_sha256 FROM _unlinked WHERE t = '${t}') GROUP BY content_sha256) a
         JOIN _unlinked u ON u.t = '${t}' AND u.content_sha256 = a.content_sha256
         WHERE a.h IS DISTINCT FROM u.h`,
      );
      const [{ linked }] = await queryRows(conn, 'SELECT count(*)::INTEGER AS linked FROM _linked');
      if (Number(linked) === 0) continue;
      delta.touch(t);
      await conn.run(
        `INSERT INTO ${delta.keysTable} SELECT DISTINCT cik FROM ${main(t)} WHERE cik IS NOT NULL AND content_sha256 IN (SELECT content_sha256 FROM _linked)`,
      );
    }
  }
  // The derive SQL over the changed companies: temp views and tables shadow the serving tables of the same name.
  for (const t of cikTables)
    await conn.run(
      `CREATE OR REPLACE TEMP VIEW ${quoteIdentifier(t)} AS SELECT * FROM ${main(t)}${t === 'ticker_snapshots' ? '' : ` WHERE ${mine}`}`,
    );
  for (const t of DERIVED) await conn.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(t)} AS SELECT * FROM ${main(t)} LIMIT 0`);
  try {
    await deriveLayerTables(conn);
    await conn.run(loadSql('./derive-lookup.sql', import.meta.url));
    await deriveAfterLookup(conn);
    for (const t of DERIVED) {
      const removed = await conn.run(`DELETE FROM ${main(t)} WHERE ${mine}`);
      const added = await conn.run(`INSERT INTO ${main(t)} SELECT * FROM temp.main.${quoteIdentifier(t)} WHERE ${mine}`);
      if (Number(removed.rowsChanged) + Number(added.rowsChanged) > 0) delta.touch(t);
    }
  } finally {
    for (const t of DERIVED) await conn.run(`DROP TABLE IF EXISTS temp.main.${quoteIdentifier(t)}`);
    for (const t of cikTables) await conn.run(`DROP VIEW IF EXISTS temp.main.${quoteIdentifier(t)}`);
  }
}
