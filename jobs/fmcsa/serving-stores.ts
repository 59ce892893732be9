/**
 * Packed per-carrier (and per-VIN) stores of the crash and inspection routes, built at FMCSA publish (issue 22:
 * `/api/crashes`, `/api/inspections` and their MCP tools without a parquet scan per request). Each record is the
 * whole answer list of one key, already in the route's order, as JSON arrays of column values in table column order
 * (each value as the API's row reader gives it: BIGINT as a string, DATE as 'YYYY-MM-DD'); the route pages it in
 * memory (service/carriers/carriers.queries.ts); ␁ is a raw U+0001 between the entries of a long list (SEP). Same rows and order as the SQL they replace
 * (service/carriers/get-crash-page.sql, count-crashes.sql, get-violations.sql, get-units.sql).
 *
 *   crash_by_dot   key dot_number: [total, fatal, injury, tow_away] ␁ [row, …] of a crash ␁ … (newest first)
 *   crash_by_vin   key textKey(vin) (lib/warehouse/packed-store.ts; VINs may share one): [[vin, counts, crashes], …]
 *   inspection_by_dot  key dot_number: count ␁ [inspection, [violation, …], [unit, …]] ␁ … (newest first)
 *   carrier_filings    key dot_number: [[authority row, …] by docket, [insurance row, …] newest first] of the
 *                      identity route (get-insurance-dockets.sql: the filings of the DOT's L&I and census dockets);
 *                      only DOTs with any.
 *
 * Part reuse: a store whose source tables' parts are the previous snapshot's is linked, not written.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryRows, quoteIdentifier } from '../../lib/warehouse/duckdb.ts';
import { textKeySql } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Store names (packed/<name>.{tsv,idx} of the snapshot). */
export const SERVING_STORES = {
  crashByDot: 'crash_by_dot',
  crashByVin: 'crash_by_vin',
  inspectionByDot: 'inspection_by_dot',
  carrierFilings: 'carrier_filings',
} as const;

/** JSON types of getRowObjectsJson that json_array renders the same way; BIGINT/DECIMAL (strings there) are cast. */
const JSON_SAME = /^(INTEGER|SMALLINT|TINYINT|VARCHAR|BOOLEAN|DATE)$/;
const JSON_AS_TEXT = /^(BIGINT|UBIGINT|HUGEINT|DECIMAL\(\d+,\d+\))$/;

/**
 * `json_array(…)` of a table's columns without source_file, in table order, valued as the API's row reader gives
 * them; null when a column type would render differently (the route then keeps its SQL).
 */
async function jsonRowSql(conn: DuckDBConnection, table: string, alias: string): Promise<string | null> {
  const cols = await queryRows(conn, `SELECT column_name, column_type FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM ${table})`);
  const values: string[] = [];
  for (const c of cols) {
    const q = `${alias}.${quoteIdentifier(String(c.column_name))}`;
    const t = String(c.column_type);
    if (JSON_SAME.test(t)) values.push(q);
    else if (JSON_AS_TEXT.test(t)) values.push(`${q}::VARCHAR`);
    else return null;
  }
  return `json_array(${values.join(', ')})`;
}

/** Crash rows of one key (`keyCol` AS k) grouped per crash, each crash's vehicle rows by report_seq_no. */
function perCrashSql(row: string, keyCol: string, where: string): string {
  return `
    SELECT ${keyCol} AS k, crash_id, max(report_date) AS newest,
      arg_min(fatalities, report_seq_no) AS fatalities, arg_min(injuries, report_seq_no) AS injuries,
      arg_min(tow_away, report_seq_no) AS tow_away,
      list(${row} ORDER BY report_seq_no) AS vehicles
    FROM crashes c WHERE ${where}
    GROUP BY ALL`;
}
/** count-crashes.sql's counts over the crashes of a group (each crash by its first vehicle row), as a JSON array. */
const CRASH_COUNTS = `json_array(count(*)::INTEGER, (count(*) FILTER (WHERE fatalities > 0))::INTEGER,
  (count(*) FILTER (WHERE injuries > 0))::INTEGER, (count(*) FILTER (WHERE tow_away))::INTEGER)`;
/** get-crash-page.sql's order of crashes. */
const CRASH_ORDER = 'newest DESC NULLS LAST, crash_id';

/**
 * Entries of a long list are separated by a raw U+0001 (never found in JSON text, where control characters are
 * escaped) after a JSON header, so a route parses its page's entries alone, however many the key has.
 */
const SEP = 'chr(1)';

/**
 * Writes (or links) the three stores; `step` times each written group as a derive step. Returns the groups
 * linked from the previous snapshot ('crash_packed', 'inspection_packed', 'filings_packed').
 */
export async function deriveServingStores(
  conn: DuckDBConnection,
  ctx: DeriveContext,
  step: (name: string, fn: () => Promise<unknown>) => Promise<void>,
): Promise<string[]> {
  const linked: string[] = [];
  const link = async (tables: string[], stores: string[]) => {
    for (const t of tables) if (!(await ctx.samePartsAsPrevious(t))) return false;
    for (const s of stores) if (!(await ctx.linkPreviousPacked(s))) return false;
    return true;
  };
  const crashRow = await jsonRowSql(conn, 'crashes', 'c');
  if (crashRow && (await link(['crashes'], [SERVING_STORES.crashByDot, SERVING_STORES.crashByVin]))) linked.push('crash_packed');
  else if (crashRow) {
    await step('crash_packed', async () => {
      await ctx.writePacked(
        SERVING_STORES.crashByDot,
        `SELECT k, ${CRASH_COUNTS}::VARCHAR || ${SEP} || string_agg(to_json(vehicles)::VARCHAR, ${SEP} ORDER BY ${CRASH_ORDER})
         FROM (${perCrashSql(crashRow, 'dot_number', 'dot_number IS NOT NULL')}) GROUP BY k`,
      );
      await ctx.writePacked(
        SERVING_STORES.crashByVin,
        `SELECT ${textKeySql('k')} AS key, to_json(list(json_array(k, counts, crashes) ORDER BY k))::VARCHAR
         FROM (SELECT k, ${CRASH_COUNTS} AS counts, to_json(list(vehicles ORDER BY ${CRASH_ORDER})) AS crashes
               FROM (${perCrashSql(crashRow, 'vin', 'vin IS NOT NULL')}) GROUP BY k)
         GROUP BY key`,
      );
    });
  }
  const insp = await jsonRowSql(conn, 'inspections', 'i');
  const viol = await jsonRowSql(conn, 'violations', 'v');
  const unit = await jsonRowSql(conn, 'inspection_units', 'u');
  if (insp && viol && unit && (await link(['inspections', 'violations', 'inspection_units'], [SERVING_STORES.inspectionByDot])))
    linked.push('inspection_packed');
  else if (insp && viol && unit) {
    await step('inspection_packed', () =>
      ctx.writePacked(
        SERVING_STORES.inspectionByDot,
        `WITH vs AS (SELECT inspection_id, list(${viol} ORDER BY seq_no) AS rows FROM violations v GROUP BY inspection_id),
              us AS (SELECT inspection_id, list(${unit} ORDER BY insp_unit_number) AS rows FROM inspection_units u GROUP BY inspection_id)
         SELECT i.dot_number, count(*)::VARCHAR || ${SEP} || string_agg(json_array(${insp}, coalesce(vs.rows, []), coalesce(us.rows, []))::VARCHAR,
           ${SEP} ORDER BY i.insp_date DESC NULLS LAST, i.inspection_id)
         FROM inspections i LEFT JOIN vs USING (inspection_id) LEFT JOIN us USING (inspection_id)
         WHERE i.dot_number IS NOT NULL
         GROUP BY i.dot_number`,
      ),
    );
  }
  const auth = await jsonRowSql(conn, 'authority', 'a');
  const ins = await jsonRowSql(conn, 'insurance', 'i');
  if (auth && ins && (await link(['carriers', 'authority', 'insurance'], [SERVING_STORES.carrierFilings]))) linked.push('filings_packed');
  else if (auth && ins) {
    await step('filings_packed', () =>
      ctx.writePacked(
        SERVING_STORES.carrierFilings,
        `WITH dockets AS (
           SELECT dot_number, docket_number FROM authority WHERE dot_number IS NOT NULL AND docket_number IS NOT NULL
           UNION
           SELECT dot_number, docket FROM (SELECT dot_number, unnest([docket1, docket2, docket3]) AS docket FROM carriers
             WHERE docket1 IS NOT NULL OR docket2 IS NOT NULL OR docket3 IS NOT NULL) WHERE docket IS NOT NULL
         ),
         ins AS (
           SELECT d.dot_number, list(${ins} ORDER BY i.effective_date DESC NULLS LAST, i.docket_number, i.ins_type_code,
             i.ins_class_code, i.max_cov_amount_k, i.underl_lim_amount_k, i.policy_no, i.ins_form_code, i.name_company) AS rows
           FROM dockets d JOIN insurance i USING (docket_number) GROUP BY d.dot_number
         ),
         auth AS (
           SELECT dot_number, list(${auth} ORDER BY a.docket_number) AS rows FROM authority a WHERE dot_number IS NOT NULL GROUP BY dot_number
         )
         SELECT dot_number, json_array(coalesce(auth.rows, []), coalesce(ins.rows, []))::VARCHAR
         FROM auth FULL JOIN ins USING (dot_number)`,
      ),
    );
  }
  return linked;
}
