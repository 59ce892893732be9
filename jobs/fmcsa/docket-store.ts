/**
 * The packed carrier_by_docket store (issue 22 item 2: `freight_carrier_lookup` and `/api/carriers?mc=` without a
 * scan of every carrier's three docket columns): per MC/MX/FF docket as the census holds it, the DOTs whose docket1,
 * docket2 or docket3 is that docket, in search-carriers-page.sql's order for a docket query (power_units DESC NULLS
 * LAST, dot_number). Keyed by `textKey(docket)` (lib/warehouse/packed-store.ts): a record is the JSON array
 * [[docket, [dot, …]], …] of the dockets sharing its key. A function of the carriers rows alone: linked from the
 * previous snapshot when they are unchanged (fmcsa.pipeline.ts, derived-from.json stamps). Written in passes over key
 * ranges (list states cannot spill).
 */
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { hashCanonical } from '../../lib/hash.ts';
import { queryRows } from '../../lib/warehouse/duckdb.ts';
import { textKeySql } from '../../lib/warehouse/packed-store.ts';
import { bucketedPasses, mapPasses } from '../../lib/warehouse/pass-files.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { sortedJsonArraySql, sortedListSql } from '../../lib/warehouse/sorted-list-sql.ts';

/** Store name (read by service/carriers). */
export const CARRIER_BY_DOCKET = 'carrier_by_docket';

/** Docket rows aggregated per pass. Tests lower it. */
export const docketPasses = { rows: 1_000_000 };

/** The 28-bit key space of textKey, cut into passes. */
const KEY_SPACE = 2 ** 28;

/** Each (carrier, docket) once: a docket in two of a carrier's columns matches it once, as the search's OR does. */
const DOCKETS = `SELECT DISTINCT dot_number, power_units, docket FROM (
    SELECT dot_number, power_units, docket1 AS docket FROM carriers
    UNION ALL SELECT dot_number, power_units, docket2 FROM carriers
    UNION ALL SELECT dot_number, power_units, docket3 FROM carriers
  ) WHERE docket IS NOT NULL`;

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

/** Writes carrier_by_docket from the carriers table. */
export async function writeDocketStore(conn: DuckDBConnection, ctx: DeriveContext): Promise<void> {
  // The docket values, an upper bound of DOCKETS' rows (a docket twice in one carrier's columns counts twice): the
  // pass count without the DISTINCT over every carrier's dockets that counting DOCKETS itself costs.
  const [{ n }] = await queryRows(conn, `SELECT (count(docket1) + count(docket2) + count(docket3))::BIGINT AS n FROM carriers`);
  const passes = Math.max(1, Math.ceil(Number(n) / docketPasses.rows));
  const step = Math.ceil(KEY_SPACE / passes);
  // Pass i takes the keys in [i·step, (i+1)·step): the docket rows are written once into a file per pass
  // (lib/warehouse/pass-files.ts), not computed again from every carrier by each pass.
  const cuts: number[] = [];
  for (let hi = step; hi < KEY_SPACE; hi += step) cuts.push(hi - 1);
  const dir = path.join(ctx.run.dir, 'derive-passes', CARRIER_BY_DOCKET);
  await ctx.writePacked(CARRIER_BY_DOCKET, mapPasses(bucketedPasses(conn, dir, `(${DOCKETS})`, textKeySql('docket'), cuts), passSql));
}
