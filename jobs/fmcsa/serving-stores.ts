/**
 * Packed per-carrier (and per-VIN) stores of the crash and inspection routes, built at FMCSA publish (issue 22:
 * `/api/crashes`, `/api/inspections` and their MCP tools without a parquet scan per request). Each record is the
 * whole answer list of one key, already in the route's order, as JSON arrays of column values in table column order
 * (each value as the API's row reader gives it: BIGINT as a string, DATE as 'YYYY-MM-DD'); the route pages it in
 * memory (service/carriers/carriers.queries.ts); ␁ is a raw U+0001 between the entries of a long list (SEP). Same rows and order as the SQL they replace
 * (service/carriers/get-crash-page.sql, count-crashes.sql, get-violations.sql, get-units.sql).
 *
 *   crash_by_dot   key dot_number: [total, fatal, injury, tow_away] ␁ vehicle row ␁ … (crashes newest first, each
 *                  crash's rows adjacent by report_seq_no; crash_id is each row's first value)
 *   crash_by_vin   key textKey(vin) (lib/warehouse/packed-store.ts; VINs may share one): [[vin, counts, crashes], …]
 *   inspection_by_dot  key dot_number: count ␁ [inspection, [violation, …], [unit, …]] ␁ … (newest first)
 *   carrier_filings    key dot_number: [[authority row, …] by docket, [insurance row, …] newest first] of the
 *                      identity route (get-insurance-dockets.sql: the filings of the DOT's L&I and census dockets);
 *                      only DOTs with any.
 *   carrier_records    key dot_number: [[sms row, …], [oos order, …], [enforcement case, …], [revocation, …]] of the
 *                      safety and enforcement routes, in their queries' order (RECORD_ORDERS); only DOTs with any.
 *
 * Part reuse: a store whose source tables' parts are the previous snapshot's is linked, not written.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryRows, quoteIdentifier } from '../../lib/warehouse/duckdb.ts';
import { textKeySql } from '../../lib/warehouse/packed-store.ts';
import { mapPasses, rangePasses } from '../../lib/warehouse/pass-files.ts';
import type { DeriveContext, DeriveStep } from '../../lib/warehouse/publish.ts';
import { type SortKey, sortedJoinSql, sortedJsonArraySql } from '../../lib/warehouse/sorted-list-sql.ts';

/** Store names (packed/<name>.{tsv,idx} of the snapshot). */
export const SERVING_STORES = {
  crashByDot: 'crash_by_dot',
  crashByVin: 'crash_by_vin',
  inspectionByDot: 'inspection_by_dot',
  carrierFilings: 'carrier_filings',
  carrierRecords: 'carrier_records',
} as const;

/**
 * The per-DOT lists of carrier_records: table and order, the same as the route's queries (carriers.queries.ts);
 * ties on the date are ordered by the whole row's JSON (`to_json(t)`), in the queries and here alike.
 */
const RECORD_ORDERS: Array<[table: string, order: SortKey[]]> = [
  ['sms_basics', ['segment', 'to_json(t)::VARCHAR']],
  ['oos_orders', [{ desc: 'oos_date', date: true }, 'to_json(t)::VARCHAR']],
  ['enforcement_cases', [{ desc: 'case_open_date', date: true }, 'to_json(t)::VARCHAR']],
  ['revocations', [{ desc: 'serve_date', date: true }, 'to_json(t)::VARCHAR']],
];

/** JSON types of getRowObjectsJson that json_array renders the same way; BIGINT/DECIMAL (strings there) are cast. */
const JSON_SAME = /^(INTEGER|SMALLINT|TINYINT|VARCHAR|BOOLEAN|DATE)$/;
/** DOUBLE renders as the shortest round-trip number, as JS does; NaN and infinities as the row reader's strings. */
const JSON_DOUBLE = /^DOUBLE$/;
const JSON_AS_TEXT = /^(BIGINT|UBIGINT|HUGEINT|DECIMAL\(\d+,\d+\))$/;

/**
 * `json_array(…)` of a table's columns without source_file, in table order, valued as the API's row reader gives
 * them; null when a column type would render differently (the route then keeps its SQL).
 */
export async function jsonRowSql(conn: DuckDBConnection, table: string, alias: string): Promise<string | null> {
  const cols = await queryRows(conn, `SELECT column_name, column_type FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM ${table})`);
  const values: string[] = [];
  for (const c of cols) {
    const q = `${alias}.${quoteIdentifier(String(c.column_name))}`;
    const t = String(c.column_type);
    if (JSON_SAME.test(t)) values.push(q);
    else if (JSON_AS_TEXT.test(t)) values.push(`${q}::VARCHAR`);
    else if (JSON_DOUBLE.test(t))
      values.push(
        `CASE WHEN isnan(${q}) THEN '"NaN"'::JSON WHEN ${q} = 'inf'::DOUBLE THEN '"Infinity"'::JSON WHEN ${q} = '-inf'::DOUBLE THEN '"-Infinity"'::JSON ELSE to_json(${q}) END`,
      );
    else return null;
  }
  return `json_array(${values.join(', ')})`;
}

/**
 * Crash rows of one key (`keyCol` AS k) grouped per crash: its newest report date, the first vehicle row's counts
 * and (unless `row` is null) its vehicle rows by report_seq_no.
 */
function perCrashSql(row: string | null, keyCol: string, where: string, from = 'crashes'): string {
  return `
    SELECT ${keyCol} AS k, crash_id, max(report_date) AS newest,
      arg_min(fatalities, report_seq_no) AS fatalities, arg_min(injuries, report_seq_no) AS injuries,
      arg_min(tow_away, report_seq_no) AS tow_away${row ? `,\n      ${sortedJsonArraySql(`${row}::VARCHAR`, ['report_seq_no'])} AS vehicles` : ''}
    FROM ${from} c WHERE ${where}
    GROUP BY ALL`;
}
/** count-crashes.sql's counts over the crashes of a group (each crash by its first vehicle row), as a JSON array. */
const CRASH_COUNTS = `json_array(count(*)::INTEGER, (count(*) FILTER (WHERE fatalities > 0))::INTEGER,
  (count(*) FILTER (WHERE injuries > 0))::INTEGER, (count(*) FILTER (WHERE tow_away))::INTEGER)`;
/** get-crash-page.sql's order of crashes (newest DESC NULLS LAST, crash_id). */
const CRASH_ORDER: SortKey[] = [{ desc: 'newest', date: true }, 'crash_id'];

/**
 * Entries of a long list are separated by a raw U+0001 (never found in JSON text, where control characters are
 * escaped) after a JSON header, so a route parses its page's entries alone, however many the key has.
 */
const SEP = 'chr(1)';

/**
 * What one pass of a store's write may aggregate. list and string_agg states cannot spill to disk and cost both
 * their text and a per-group overhead (measured: 1.5 M rows of ~260 bytes, 390 MB of JSON, aggregated per key ran
 * out of memory under a 1 GB limit in one pass, and a sixth of them under 200 MB; the real SMS fixture's 917,920
 * one-row groups, 155 MB of JSON, under 1 GB even in two passes, but not in seven), so each pass covers a key range
 * of at most `keys` keys (groups) whose JSON is at most `bytes` (0: an eighth of DuckDB's memory limit). The bound is
 * on keys, not rows: a key of many rows costs one group (until 2026-11-28 it was 150,000 rows, which cut the
 * full-scale crash_by_dot store into 24 passes and inspection_by_dot into 34: 6 and 8 passes now, about 1 s less
 * derive in all at full scale on 2026-11-28's machine, docs/benchmarks.md). Tests lower both to exercise the passes.
 */
export const storePasses = { bytes: 0, keys: 150_000 };

const UNIT_BYTES: Record<string, number> = { KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 };

/** The JSON text one pass may aggregate (see storePasses). */
async function passBytes(conn: DuckDBConnection): Promise<number> {
  if (storePasses.bytes > 0) return storePasses.bytes;
  const [{ m }] = await queryRows(conn, `SELECT current_setting('memory_limit') AS m`);
  const x = /^([\d.]+)\s*([KMGT]i?B)$/.exec(String(m));
  return ((x ? Number(x[1]) * (UNIT_BYTES[x[2]!] ?? 1e9) : 1e9) / 8) | 0;
}

/** The JSON text of `rows` (table, alias, json_array over the alias): row count times a sample's mean length. */
async function jsonBytes(conn: DuckDBConnection, rows: Array<[table: string, alias: string, json: string]>): Promise<number> {
  let total = 0;
  for (const [table, alias, json] of rows) {
    const [{ b }] = await queryRows(
      conn,
      `SELECT ((SELECT count(*) FROM ${table}) * coalesce((SELECT avg(length(${json}::VARCHAR)) FROM (SELECT * FROM ${table} USING SAMPLE 2000 ROWS) ${alias}), 0))::DOUBLE AS b`,
    );
    total += Number(b);
  }
  return total;
}

/**
 * Predicates on the INTEGER expression `key` splitting the rows of `from` into key ranges that fit one pass
 * (storePasses: at most `keys` keys, and a share of `bytes`, the JSON of all the rows aggregated, in proportion to
 * the rows): ['true'] for one pass. The cuts are computed integers, not request values.
 */
async function keyRanges(conn: DuckDBConnection, from: string, key: string, bytes: number): Promise<string[]> {
  return rangesOf(key, await keyCuts(conn, from, key, bytes));
}

/** Passes needed for `keys` keys of rows whose JSON is `bytes` long (storePasses). */
async function passesFor(conn: DuckDBConnection, keys: number, bytes: number): Promise<number> {
  return Math.max(Math.ceil(bytes / (await passBytes(conn))), Math.ceil(keys / storePasses.keys));
}

/**
 * Cuts of a text key (textKeySql: 28 bits of an MD5, uniform over [0, 2^28)) into `k` passes, at even steps of the
 * key space instead of at quantiles: no scan hashing every text to find them (the passes' sizes differ by chance
 * only, by about one percent at full scale).
 */
const evenTextKeyCuts = (k: number): number[] =>
  Array.from({ length: Math.max(0, k - 1) }, (_, i) => Math.floor(((i + 1) * 2 ** 28) / k) - 1);

/** Consecutive key values keyCuts walks as one bucket (integer keys: at most this many keys in one). */
const CUT_BUCKET = 64;

/**
 * The cuts of keyRanges: pass i takes the keys in (cuts[i-1], cuts[i]], the last pass those above the last cut.
 * Greedy over buckets of CUT_BUCKET consecutive key values in order, with their keys and rows: a pass ends before the
 * bucket that would take it past `storePasses.keys` keys or past its rows' share of one pass's JSON (a bucket is
 * never split, so a bucket with more rows than that share has a pass of its own; buckets are no wider than
 * `storePasses.keys`, so no pass has more keys). Buckets, not keys, so that Node reads at most a 64th of the keys
 * (2 M DOTs with a docket at full scale).
 */
async function keyCuts(conn: DuckDBConnection, from: string, key: string, bytes: number): Promise<number[]> {
  const width = Math.max(1, Math.min(CUT_BUCKET, storePasses.keys));
  const lasts: number[] = [];
  const keysIn: number[] = [];
  const rowsIn: number[] = [];
  const result = await conn.stream(`SELECT max(k)::BIGINT AS last, count(*)::BIGINT AS keys, sum(n)::BIGINT AS n
    FROM (SELECT ${key}::BIGINT AS k, count(*) AS n FROM ${from} WHERE ${key} IS NOT NULL GROUP BY 1)
    GROUP BY floor(k / ${width}) ORDER BY 1`);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const [l, k, n] = [0, 1, 2].map((c) => chunk.getColumnVector(c));
    for (let i = 0, count = chunk.rowCount; i < count; i++) {
      lasts.push(Number(l!.getItem(i)));
      keysIn.push(Number(k!.getItem(i)));
      rowsIn.push(Number(n!.getItem(i)));
    }
  }
  const keys = keysIn.reduce((a, b) => a + b, 0);
  if ((await passesFor(conn, keys, bytes)) <= 1) return [];
  // Rows per pass: the JSON is spread over the rows in proportion (jsonBytes: row count times a sample's mean).
  const rows = rowsIn.reduce((a, b) => a + b, 0);
  const rowCap = Math.max(1, Math.floor((rows * (await passBytes(conn))) / Math.max(1, bytes)));
  const cuts: number[] = [];
  let passKeys = 0;
  let passRows = 0;
  for (let i = 0; i < lasts.length; i++) {
    if (passKeys > 0 && (passKeys + keysIn[i]! > storePasses.keys || passRows + rowsIn[i]! > rowCap)) {
      cuts.push(lasts[i - 1]!);
      passKeys = 0;
      passRows = 0;
    }
    passKeys += keysIn[i]!;
    passRows += rowsIn[i]!;
  }
  return cuts;
}

/** The predicates on `key` of the passes between `cuts` (['true'] without cuts). */
function rangesOf(key: string, cuts: number[]): string[] {
  const ranges: string[] = [];
  let low: number | null = null;
  for (const cut of cuts) {
    ranges.push(low == null ? `(${key} <= ${cut})` : `(${key} > ${low} AND ${key} <= ${cut})`);
    low = cut;
  }
  ranges.push(low == null ? 'true' : `(${key} > ${low})`);
  return ranges;
}

/**
 * The general path of crash_by_vin over the crash rows of `src`: rows grouped per crash, crashes per VIN, VINs per key
 * (`[[vin, counts, crashes], …]` in VIN order, counts being count-crashes.sql's, crashes in get-crash-page.sql's
 * order). Aggregates whole rows per key, so it runs in passes of bounded size (storePasses).
 */
export function crashByVinGroupedSql(crashRow: string, src: string): string {
  return `SELECT ${textKeySql('k')} AS key, ${sortedJsonArraySql(`'[' || to_json(k)::VARCHAR || ',' || counts || ',' || crashes || ']'`, ['k'])}
    FROM (SELECT k, ${CRASH_COUNTS}::VARCHAR AS counts, ${sortedJsonArraySql('vehicles', CRASH_ORDER)} AS crashes
          FROM (${perCrashSql(crashRow, 'vin', 'vin IS NOT NULL', src)}) GROUP BY k)
    GROUP BY 1`;
}

/**
 * The crash_by_vin records of the keys of one crash row (every key not in `shared`, the temp table of the keys of
 * more than one row): written straight from that row, no aggregation, so one streaming pass over the whole table
 * (bounded memory, no pass files): `[[vin, counts, [[row]]]]`, counts being count-crashes.sql's over that one crash
 * ([1, fatal, injury, tow_away] as 0/1). The same bytes as crashByVinGroupedSql gives such a key (test/fmcsa/derive-plan.test.ts).
 */
export function crashByVinSingleSql(crashRow: string, src: string, shared: string): string {
  // The key is computed once, below the anti-join, and the row's JSON above it: only for the rows written here.
  return `SELECT key, '[[' || to_json(vin)::VARCHAR || ',' || json_array(1, (CASE WHEN fatalities > 0 THEN 1 ELSE 0 END),
      (CASE WHEN injuries > 0 THEN 1 ELSE 0 END), (CASE WHEN tow_away THEN 1 ELSE 0 END))::VARCHAR || ',[[' || ${crashRow}::VARCHAR || ']]]]'
    FROM (SELECT ${textKeySql('vin')} AS key, * FROM ${src} WHERE vin IS NOT NULL) c
    WHERE key NOT IN (SELECT key FROM ${shared})`;
}

/** The temp table of crash_by_vin's keys of more than one crash row (a VIN in several crashes, or VINs sharing a key) and their row counts. */
const CRASH_VIN_SHARED = 'crash_vin_shared';
/** The temp table of every VIN row's key and `hash(vin)` (12 bytes a row), from which the shared keys are counted. */
const CRASH_VIN_KEYS = 'crash_vin_keys';
/** The temp table of the `hash(vin)` of the shared keys' rows: the filter that finds their rows without an MD5 of every VIN. */
const CRASH_VIN_SHARED_HASHES = 'crash_vin_shared_hashes';
/** The temp table of those keys' rows (key, the columns the grouping reads, the row's JSON as `row`). */
const CRASH_VIN_SHARED_ROWS = 'crash_vin_shared_rows';

/**
 * crash_by_vin's selects, in turn: nearly every key is one VIN with one vehicle row in one crash, whose record is
 * written straight from that row in one pass over the crash table (crashByVinSingleSql); the keys of more rows
 * (a sixth of the rows at medium scale, 539,006 of 3.58 M at full scale) take the general path (crashByVinGroupedSql),
 * in passes over key ranges of a temp table of their rows alone. Before, every row went through the pass files and a grouping per key (two thirds of the
 * crash stores' CPU at full scale); the records are the same (the test compares them over crafted rows).
 * The MD5 key is computed over every row twice (counting the keys, and the one-row keys' select, which needs it to
 * write), and for the shared keys' rows a third time, after a filter on `hash(vin)` (cheaper than the MD5); each row's
 * JSON is built once, after its key's test (test/fmcsa/derive-plan.test.ts guards both in the plans).
 */
export async function* crashByVinSelects(
  conn: DuckDBConnection,
  crashRow: string,
  crashBytes: number,
  from = 'crashes',
): AsyncIterable<string> {
  const key = textKeySql('vin');
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE ${CRASH_VIN_KEYS} AS SELECT ${key} AS key, hash(vin) AS h FROM ${from} WHERE vin IS NOT NULL`,
  );
  try {
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE ${CRASH_VIN_SHARED} AS SELECT key, count(*) AS n FROM ${CRASH_VIN_KEYS} GROUP BY key HAVING count(*) > 1`,
    );
    yield crashByVinSingleSql(crashRow, from, CRASH_VIN_SHARED);
    const [{ keys, rows, all }] = await queryRows(
      conn,
      `SELECT (SELECT count(*) FROM ${CRASH_VIN_SHARED})::BIGINT AS keys, coalesce((SELECT sum(n) FROM ${CRASH_VIN_SHARED}), 0)::BIGINT AS rows,
        (SELECT count(*) FROM ${from})::BIGINT AS "all"`,
    );
    if (Number(rows) === 0) return;
    // The shared keys' rows, once, into a compact temp table (the columns the grouping reads and each row's JSON):
    // each pass reads its key range of it (no pass files of every column, no MD5 computed again per pass). A row is
    // one of them when its key is shared; the hashes of their VINs find them first (a hash shared by chance with a
    // VIN of a one-row key lets that row through to the key's test, never drops one).
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE ${CRASH_VIN_SHARED_HASHES} AS SELECT DISTINCT h FROM ${CRASH_VIN_KEYS} WHERE key IN (SELECT key FROM ${CRASH_VIN_SHARED})`,
    );
    await conn.run(`CREATE OR REPLACE TEMP TABLE ${CRASH_VIN_SHARED_ROWS} AS
      SELECT key, vin, crash_id, report_date, report_seq_no, fatalities, injuries, tow_away, ${crashRow}::VARCHAR AS row
      FROM (SELECT ${key} AS key, * FROM ${from} WHERE vin IS NOT NULL AND hash(vin) IN (SELECT h FROM ${CRASH_VIN_SHARED_HASHES})) c
      WHERE key IN (SELECT key FROM ${CRASH_VIN_SHARED})`);
    const k = await passesFor(conn, Number(keys), (crashBytes * Number(rows)) / Math.max(1, Number(all)));
    for (const range of rangesOf('key', evenTextKeyCuts(k)))
      yield crashByVinGroupedSql('c.row', `(SELECT * FROM ${CRASH_VIN_SHARED_ROWS} WHERE ${range})`);
  } finally {
    await conn.run(
      `DROP TABLE IF EXISTS ${CRASH_VIN_KEYS}; DROP TABLE IF EXISTS ${CRASH_VIN_SHARED}; DROP TABLE IF EXISTS ${CRASH_VIN_SHARED_HASHES}; DROP TABLE IF EXISTS ${CRASH_VIN_SHARED_ROWS}`,
    );
  }
}

/**
 * Writes (or links) the three stores; `step` times each written group as a derive step. Returns the groups
 * linked from the previous snapshot ('crash_packed', 'inspection_packed', 'filings_packed', 'records_packed').
 */
export async function deriveServingStores(conn: DuckDBConnection, ctx: DeriveContext, step: DeriveStep): Promise<string[]> {
  const linked: string[] = [];
  // A table is unchanged when its parts are the previous snapshot's, or when it is empty now and was then (a dataset
  // with no file, such as enforcement_cases until one is supplied, has no parts to compare).
  const unchanged = async (t: string) =>
    (await ctx.samePartsAsPrevious(t)) ||
    (ctx.previous?.tables[t]?.rows === 0 &&
      Number((await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM ${quoteIdentifier(t)}`))[0]?.n) === 0);
  const link = async (tables: string[], stores: string[]) => {
    for (const t of tables) if (!(await unchanged(t))) return false;
    for (const s of stores) if (!(await ctx.linkPreviousPacked(s))) return false;
    return true;
  };
  const crashRow = await jsonRowSql(conn, 'crashes', 'c');
  if (crashRow && (await link(['crashes'], [SERVING_STORES.crashByDot, SERVING_STORES.crashByVin]))) linked.push('crash_packed');
  else if (crashRow) {
    await step('crash_packed', async () => {
      // One vehicle row per entry, in get-crash-page.sql's order (a crash's rows are adjacent: the route groups them by
      // crash_id, the entry's first value), so a DOT's rows are aggregated once (per-crash lists first cost 2.5x).
      const crashBytes = await jsonBytes(conn, [['crashes', 'c', crashRow]]);
      // By DOT: the crash file is in DOT order, so a pass's range filter skips the other passes' row groups; by VIN
      // (an MD5 of it) no row group can be skipped: the keys of one row need no pass (crashByVinSelects), the
      // others' rows are written once into a temp table each pass reads its key range of.
      const byDot = await keyRanges(conn, 'crashes', 'dot_number', crashBytes);
      await ctx.writePacked(
        SERVING_STORES.crashByDot,
        mapPasses(
          rangePasses('crashes', byDot),
          (src) => `WITH pc AS (${perCrashSql(null, 'dot_number', 'dot_number IS NOT NULL', src)}),
             counts AS (SELECT k, ${CRASH_COUNTS} AS counts FROM pc GROUP BY k),
             vehicles AS (
               SELECT c.dot_number AS k, ${sortedJoinSql(`${crashRow}::VARCHAR`, [{ desc: 'p.newest', date: true }, 'p.crash_id', 'c.report_seq_no'], SEP)} AS v
               FROM ${src} c JOIN pc p ON p.k = c.dot_number AND p.crash_id = c.crash_id
               GROUP BY 1
             )
           SELECT k, counts::VARCHAR || ${SEP} || v FROM counts JOIN vehicles USING (k)`,
        ),
      );
      await ctx.writePacked(SERVING_STORES.crashByVin, crashByVinSelects(conn, crashRow, crashBytes));
    });
  }
  const insp = await jsonRowSql(conn, 'inspections', 'i');
  const viol = await jsonRowSql(conn, 'violations', 'v');
  const unit = await jsonRowSql(conn, 'inspection_units', 'u');
  if (insp && viol && unit && (await link(['inspections', 'violations', 'inspection_units'], [SERVING_STORES.inspectionByDot])))
    linked.push('inspection_packed');
  else if (insp && viol && unit) {
    await step('inspection_packed', async () => {
      const bytes = await jsonBytes(conn, [
        ['inspections', 'i', insp],
        ['violations', 'v', viol],
        ['inspection_units', 'u', unit],
      ]);
      const ranges = await keyRanges(conn, 'inspections', 'dot_number', bytes);
      await ctx.writePacked(
        SERVING_STORES.inspectionByDot,
        mapPasses(
          rangePasses('inspections', ranges),
          (src) => `WITH ii AS (SELECT * FROM ${src} WHERE dot_number IS NOT NULL),
                vs AS (SELECT inspection_id, ${sortedJsonArraySql(`${viol}::VARCHAR`, ['seq_no'])} AS rows FROM violations v
                       WHERE inspection_id IN (SELECT inspection_id FROM ii) GROUP BY inspection_id),
                us AS (SELECT inspection_id, ${sortedJsonArraySql(`${unit}::VARCHAR`, ['insp_unit_number'])} AS rows FROM inspection_units u
                       WHERE inspection_id IN (SELECT inspection_id FROM ii) GROUP BY inspection_id)
           SELECT i.dot_number, count(*)::VARCHAR || ${SEP} || ${sortedJoinSql(
             `'[' || ${insp}::VARCHAR || ',' || coalesce(vs.rows, '[]') || ',' || coalesce(us.rows, '[]') || ']'`,
             [{ desc: 'i.insp_date', date: true }, 'i.inspection_id'],
             SEP,
           )}
           FROM ii i LEFT JOIN vs USING (inspection_id) LEFT JOIN us USING (inspection_id)
           GROUP BY i.dot_number`,
        ),
      );
    });
  }
  const auth = await jsonRowSql(conn, 'authority', 'a');
  const ins = await jsonRowSql(conn, 'insurance', 'i');
  if (auth && ins && (await link(['carriers', 'authority', 'insurance'], [SERVING_STORES.carrierFilings]))) linked.push('filings_packed');
  else if (auth && ins) {
    await step('filings_packed', async () => {
      const bytes = await jsonBytes(conn, [
        ['authority', 'a', auth],
        ['insurance', 'i', ins],
      ]);
      const ranges = await keyRanges(
        conn,
        `(SELECT dot_number FROM authority UNION ALL SELECT dot_number FROM carriers
          WHERE docket1 IS NOT NULL OR docket2 IS NOT NULL OR docket3 IS NOT NULL) AS s`,
        'dot_number',
        bytes,
      );
      await ctx.writePacked(
        SERVING_STORES.carrierFilings,
        ranges.map(
          (range) => `WITH dockets AS (
             SELECT dot_number, docket_number FROM authority WHERE dot_number IS NOT NULL AND docket_number IS NOT NULL AND ${range}
             UNION
             SELECT dot_number, docket FROM (SELECT dot_number, unnest([docket1, docket2, docket3]) AS docket FROM carriers
               WHERE (docket1 IS NOT NULL OR docket2 IS NOT NULL OR docket3 IS NOT NULL) AND ${range}) WHERE docket IS NOT NULL
           ),
           ins AS (
             SELECT d.dot_number, ${sortedJsonArraySql(`${ins}::VARCHAR`, [
               { desc: 'i.effective_date', date: true },
               ...'docket_number ins_type_code ins_class_code max_cov_amount_k underl_lim_amount_k policy_no ins_form_code name_company'
                 .split(' ')
                 .map((c) => `i.${c}`),
             ])} AS rows
             FROM dockets d JOIN insurance i USING (docket_number) GROUP BY d.dot_number
           ),
           auth AS (
             SELECT dot_number, ${sortedJsonArraySql(`${auth}::VARCHAR`, ['a.docket_number'])} AS rows FROM authority a
             WHERE dot_number IS NOT NULL AND ${range} GROUP BY dot_number
           )
           SELECT dot_number, '[' || coalesce(auth.rows, '[]') || ',' || coalesce(ins.rows, '[]') || ']'
           FROM auth FULL JOIN ins USING (dot_number)`,
        ),
      );
    });
  }
  const records: Array<[table: string, row: string, order: SortKey[]]> = [];
  for (const [table, order] of RECORD_ORDERS) {
    const row = await jsonRowSql(conn, table, 't');
    if (!row) return linked;
    records.push([table, row, order]);
  }
  if (
    await link(
      RECORD_ORDERS.map(([t]) => t),
      [SERVING_STORES.carrierRecords],
    )
  )
    linked.push('records_packed');
  else
    await step('records_packed', async () => {
      const ranges = await keyRanges(
        conn,
        `(${records.map(([t]) => `SELECT dot_number FROM ${t}`).join(' UNION ALL ')}) AS s`,
        'dot_number',
        await jsonBytes(
          conn,
          records.map(([t, row]) => [t, 't', row]),
        ),
      );
      await ctx.writePacked(
        SERVING_STORES.carrierRecords,
        ranges.map((range) => {
          const lists = records.map(
            ([table, row, order]) =>
              `SELECT dot_number, ${sortedJsonArraySql(`${row}::VARCHAR`, order)} AS rows FROM ${table} t WHERE dot_number IS NOT NULL AND ${range} GROUP BY dot_number`,
          );
          return `WITH ${lists.map((q, i) => `r${i} AS (${q})`).join(', ')},
           dots AS (${lists.map((_q, i) => `SELECT dot_number FROM r${i}`).join(' UNION ')})
           SELECT dot_number, '[' || ${lists.map((_q, i) => `coalesce(r${i}.rows, '[]')`).join(" || ',' || ")} || ']'
           FROM dots ${lists.map((_q, i) => `LEFT JOIN r${i} USING (dot_number)`).join(' ')}`;
        }),
      );
    });
  return linked;
}
