/**
 * The packed carrier_by_docket store (issue 22 item 2: `freight_carrier_lookup` and `/api/carriers?mc=` without a
 * scan of every carrier's three docket columns): per MC/MX/FF docket as the census holds it, the DOTs whose docket1,
 * docket2 or docket3 is that docket, in search-carriers-page.sql's order for a docket query (power_units DESC NULLS
 * LAST, dot_number). Keyed by `textKey(docket)` (lib/warehouse/packed-store.ts): a record is the JSON array
 * [[docket, [dot, …]], …] of the dockets sharing its key. A function of the carriers rows alone: linked from the
 * previous snapshot when they are unchanged (fmcsa.pipeline.ts, derived-from.json stamps). The keys of one docket row
 * are written straight from it; the others in passes over key ranges (list states cannot spill): docketStoreSelects.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { hashCanonical } from '../../lib/hash.ts';
import { queryRows } from '../../lib/warehouse/duckdb.ts';
import { textKeySql } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { sortedJsonArraySql, sortedListSql } from '../../lib/warehouse/sorted-list-sql.ts';

/** Store name (read by service/carriers). */
export const CARRIER_BY_DOCKET = 'carrier_by_docket';

/** Docket rows aggregated per pass. Tests lower it. */
export const docketPasses = { rows: 1_000_000 };

/** The 28-bit key space of textKey, cut into passes. */
const KEY_SPACE = 2 ** 28;

/** Each (carrier, docket) once: a docket in two of a carrier's columns matches it once, as the search's OR does. */
export const docketRowsSql = (from: string) => `SELECT DISTINCT dot_number, power_units, docket FROM (
    SELECT dot_number, power_units, docket1 AS docket FROM ${from}
    UNION ALL SELECT dot_number, power_units, docket2 FROM ${from}
    UNION ALL SELECT dot_number, power_units, docket3 FROM ${from}
  ) WHERE docket IS NOT NULL`;
const DOCKETS = docketRowsSql('carriers');

function passSql(source: string): string {
  // Lists sorted by list_sort, not ordered aggregates (lib/warehouse/sorted-list-sql.ts: the same lists, a fraction of the CPU).
  return `SELECT k, ${sortedJsonArraySql('json_array(docket, dots)::VARCHAR', ['docket'])} AS v
    FROM (
      SELECT ${textKeySql('docket')} AS k, docket, ${sortedListSql('dot_number', [{ desc: 'power_units' }, 'dot_number'])} AS dots
      FROM ${source}
      GROUP BY docket
    )
    GROUP BY k`;
}

/** How the store is computed (its SQL): the stamp of derived-from.json. */
export const DOCKET_STORE_STAMP = hashCanonical({ pass: passSql(`(${DOCKETS})`), format: 'packed-store' });

/** The general path of the store over docket rows `source` (dot_number, power_units, docket): grouped per docket, then per key. */
export const docketGroupedSql = passSql;

/** Temp tables of the write: every docket row with its key, and the keys of more than one row with their row counts. */
const DOCKET_ROWS = 'docket_rows';
const DOCKET_SHARED = 'docket_shared';

/**
 * The store's selects, in turn, over DOCKETS' rows of `from` (the carriers table): nearly every key is one docket of
 * one carrier, whose record `[[docket, [dot]]]` is written straight from its row in one select with no grouping
 * (before, every row went through a pass file and two groupings: 8.6 s of CPU at full scale); the keys of more rows
 * (a docket of several carriers, or dockets sharing a key: 14,589 of 2.0 M rows at full scale) take the general
 * path (passSql) in passes over key ranges of at most docketPasses.rows rows. The docket rows are computed once,
 * into a compact temp table (key, DOT, power units, docket) each select reads. The same records as passSql alone
 * (test/fmcsa/derive-plan.test.ts).
 */
export async function* docketStoreSelects(conn: DuckDBConnection, from = 'carriers'): AsyncIterable<string> {
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE ${DOCKET_ROWS} AS SELECT ${textKeySql('docket')} AS key, dot_number, power_units, docket FROM (${docketRowsSql(from)})`,
  );
  try {
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE ${DOCKET_SHARED} AS SELECT key, count(*) AS n FROM ${DOCKET_ROWS} GROUP BY key HAVING count(*) > 1`,
    );
    yield `SELECT key, '[' || json_array(docket, [dot_number])::VARCHAR || ']' FROM ${DOCKET_ROWS} WHERE key NOT IN (SELECT key FROM ${DOCKET_SHARED})`;
    const [{ n }] = await queryRows(conn, `SELECT coalesce(sum(n), 0)::BIGINT AS n FROM ${DOCKET_SHARED}`);
    if (Number(n) === 0) return;
    const passes = Math.max(1, Math.ceil(Number(n) / docketPasses.rows));
    const step = Math.ceil(KEY_SPACE / passes);
    for (let lo = 0; lo < KEY_SPACE; lo += step)
      yield passSql(
        `(SELECT dot_number, power_units, docket FROM ${DOCKET_ROWS} WHERE key >= ${lo} AND key < ${lo + step} AND key IN (SELECT key FROM ${DOCKET_SHARED}))`,
      );
  } finally {
    await conn.run(`DROP TABLE IF EXISTS ${DOCKET_SHARED}; DROP TABLE IF EXISTS ${DOCKET_ROWS}`);
  }
}

/** Writes carrier_by_docket from the carriers table. */
export async function writeDocketStore(conn: DuckDBConnection, ctx: DeriveContext): Promise<void> {
  await ctx.writePacked(CARRIER_BY_DOCKET, docketStoreSelects(conn));
}
