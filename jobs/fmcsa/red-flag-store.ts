/**
 * Packed red-flag lists, built at FMCSA publish from red_flag_rows (a temp table, jobs/fmcsa/derive-red-flag-rows.sql), so that
 * `/api/red-flags` and `freight_red_flag_search` answer with no DuckDB query (issue 22 item 2: a search-like route
 * answers by a binary search and a bounded read, not a scan or a count per request). Layout and keys: ingest/fmcsa/search-store-keys.ts.
 *
 * A page is the header, the one to three blocks covering [offset, offset + limit) and one row read per carrier;
 * `min_risk` cuts the list at the first block whose first score is below it (scores descend, so the carriers at or
 * above a score are a prefix of every list), read from that block. Only the codes of the risk model and 2-letter
 * states get a list (the route accepts no other); the total of a filter with no list is 0.
 */
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral, queryRows } from '../../lib/warehouse/duckdb.ts';
import { bucketedPasses, mapPasses } from '../../lib/warehouse/pass-files.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { writeRecordTable } from './record-table.ts';
import {
  RATINGS,
  RED_FLAG_BLOCK,
  RED_FLAG_CODES_KEY,
  RED_FLAG_ROW_COLUMNS,
  RED_FLAG_STORES,
  redFlagKeysFit,
  SLOTS,
  STATE_KEYS,
} from '../../ingest/fmcsa/search-store-keys.ts';

/**
 * Entries aggregated into lists per pass of the SQL path (list states cannot spill to disk; ~16 bytes each), and
 * whether Node writes the lists instead (redFlagListsInNode: the same records; false: the SQL, the reference the
 * tests compare it with).
 */
export const redFlagPasses = { entries: 4_000_000, node: true };

/** Records appended to DuckDB per batch of the Node path (a block record is a few KB of JSON). */
const NODE_BATCH_RECORDS = 5_000;

/** A filter's list being written by the Node path: its current block, its total and each block's first score. */
interface FilterList {
  gs: Int32Array;
  scores: Int32Array;
  n: number;
  blocks: number;
  total: number;
  firsts: number[];
}

/**
 * A JSON array of the first `n` integers of `xs` as json_array writes a list of INTEGER (no spaces), NULL_SCORE
 * written as null (a typed array's native join: concatenating the text number by number left millions of rope
 * strings to the garbage collector).
 */
const jsonInts = (xs: Int32Array, n: number): string => {
  const text = `[${xs.subarray(0, n).join(',')}]`;
  return text.includes(NULL_TEXT) ? text.replaceAll(NULL_TEXT, 'null') : text;
};
/** The stand-in of a NULL risk_score in the Node path's Int32Arrays (a risk score is 0-100; no INTEGER is below it). */
const NULL_SCORE = -(2 ** 31);
const NULL_TEXT = String(NULL_SCORE);

/**
 * The red_flag_lists records computed in Node (issue 22 item 4: the SQL numbered every entry of every filter with a
 * window sort and grouped them into blocks, about 7 CPU-s at full scale), as writePacked batches: the filters of
 * each distinct (codes, state, rating) of the flagged carriers come from `keyedOf` (the SQL's own expansion), the
 * carriers are read once with their combination's number, and one walk in `g` order appends each carrier to its
 * filters' lists (the lists' order: `g`), writing each block of RED_FLAG_BLOCK as it fills and each header at the
 * end. The same records as the SQL path (test/fmcsa/derive-plan.test.ts compares them record by record).
 */
async function* redFlagListsInNode(conn: DuckDBConnection, keyedOf: (rows: string, cols: string) => string): AsyncIterable<string> {
  const same = (c: string) => `r.${c} IS NOT DISTINCT FROM c.${c}`;
  await conn.run(`CREATE OR REPLACE TEMP TABLE red_flag_combos AS
    SELECT (row_number() OVER () - 1)::INTEGER AS cid, red_flag_codes, phy_state, safety_rating
    FROM (SELECT DISTINCT red_flag_codes, phy_state, safety_rating FROM red_flag_rows)`);
  try {
    const filtersOf: number[][] = [];
    for (const { f, cid } of await queryRows(conn, `SELECT f::INTEGER AS f, cid FROM (${keyedOf('red_flag_combos', 'r.cid')})`))
      (filtersOf[Number(cid)] ??= []).push(Number(f));
    const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM red_flag_rows`);
    const count = Number(n);
    const cidOf = new Int32Array(count).fill(-1);
    const scoreOf = new Int32Array(count);
    const result = await conn.stream(`SELECT r.g, r.risk_score, c.cid FROM red_flag_rows r
      JOIN red_flag_combos c ON ${same('red_flag_codes')} AND ${same('phy_state')} AND ${same('safety_rating')}`);
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const rows = chunk.rowCount;
      const g = chunk.getColumnVector(0);
      const score = chunk.getColumnVector(1);
      const cid = chunk.getColumnVector(2);
      for (let i = 0; i < rows; i++) {
        const at = g.getItem(i) as number;
        cidOf[at] = cid.getItem(i) as number;
        scoreOf[at] = (score.getItem(i) as number | null) ?? NULL_SCORE;
      }
    }
    // g numbers the rows from 0 (derive-red-flag-rows.sql): every one was read once.
    if (cidOf.includes(-1)) throw new Error('red_flag_rows: g is not 0..n-1');
    const lists = new Map<number, FilterList>();
    let records: Array<[number, string]> = [];
    const flush = async function* () {
      const select = await writeRecordTable(conn, 'red_flag_records', records);
      records = [];
      yield select;
    };
    const block = (f: number, l: FilterList) => {
      records.push([f * SLOTS + 1 + l.blocks, `[${jsonInts(l.gs, l.n)},${jsonInts(l.scores, l.n)}]`]);
      l.firsts.push(l.scores[0]!);
      l.blocks++;
      l.n = 0;
    };
    for (let g = 0; g < count; g++) {
      const fs = filtersOf[cidOf[g]!];
      if (!fs) continue;
      for (const f of fs) {
        let l = lists.get(f);
        if (!l)
          lists.set(
            f,
            (l = { gs: new Int32Array(RED_FLAG_BLOCK), scores: new Int32Array(RED_FLAG_BLOCK), n: 0, blocks: 0, total: 0, firsts: [] }),
          );
        l.gs[l.n] = g;
        l.scores[l.n] = scoreOf[g]!;
        l.n++;
        l.total++;
        if (l.n === RED_FLAG_BLOCK) block(f, l);
      }
      if (records.length >= NODE_BATCH_RECORDS) yield* flush();
    }
    for (const [f, l] of lists) {
      if (l.n > 0) block(f, l);
      records.push([f * SLOTS, `[${l.total},${jsonInts(Int32Array.from(l.firsts), l.firsts.length)}]`]);
    }
    if (records.length > 0) yield* flush();
  } finally {
    await conn.run('DROP TABLE IF EXISTS red_flag_records; DROP TABLE IF EXISTS red_flag_combos');
  }
}

/**
 * Writes both stores from red_flag_rows (which must exist) for the rule codes `codes` (in the route's order: the
 * key of a code is its position). Skipped (returns false) when the keys would not fit an INTEGER.
 */
export async function writeRedFlagStores(conn: DuckDBConnection, ctx: DeriveContext, codes: readonly string[]): Promise<boolean> {
  if (!redFlagKeysFit(codes)) return false;
  const codeIds = ["('*', 0)", ...codes.map((c, i) => `(${quoteLiteral(c)}, ${i + 1})`)].join(', ');
  // One row per (filter, carrier): the carrier's flags and '*' × its state and any × its rating and any. Not stored:
  // each pass recomputes its filters' rows from red_flag_rows (a scan of the flagged carriers), so no table of every
  // entry (about 12 per flagged carrier, some 26 M at full scale) is ever held.
  // `rows` is the source of the carriers (red_flag_rows, or its distinct (codes, state, rating) with their number
  // `w`), `cols` what each entry carries from it.
  const keyedOf = (rows: string, cols: string) => `WITH ids(code, ci) AS (VALUES ${codeIds}),
    coded AS (
      SELECT i.ci, ${cols},
        CASE WHEN regexp_full_match(r.phy_state, '[A-Z]{2}')
          THEN 1 + (ascii(r.phy_state[1]) - 65) * 26 + (ascii(r.phy_state[2]) - 65) END AS si,
        CASE r.safety_rating WHEN 'S' THEN 1 WHEN 'C' THEN 2 WHEN 'U' THEN 3 END AS ri
      FROM (SELECT *, unnest(list_concat(['*'], list_distinct(red_flag_codes))) AS code FROM ${rows}) r
      JOIN ids i ON i.code = r.code
    )
    SELECT (ci * ${STATE_KEYS} + s) * ${RATINGS.length + 1} + rt AS f, ${cols.replace(/r\./g, '')}
    FROM coded, unnest(CASE WHEN si IS NULL THEN [0] ELSE [0, si] END) AS t1(s),
      unnest(CASE WHEN ri IS NULL THEN [0] ELSE [0, ri] END) AS t2(rt)`;
  const passes = redFlagPasses.node ? redFlagListsInNode(conn, keyedOf) : await redFlagListsInSql(conn, ctx, keyedOf);
  async function* withCodes(): AsyncIterable<string> {
    yield* passes;
    yield `SELECT ${RED_FLAG_CODES_KEY}::INTEGER AS k, to_json([${codes.map(quoteLiteral).join(', ')}]::VARCHAR[])::VARCHAR AS v`;
  }
  await ctx.writePacked(RED_FLAG_STORES.lists, withCodes());
  await ctx.writePacked(RED_FLAG_STORES.rows, `SELECT g, json_array(${RED_FLAG_ROW_COLUMNS.join(', ')})::VARCHAR AS v FROM red_flag_rows`);
  return true;
}

/** The red_flag_lists records by SQL, in passes over filter ranges (the reference of redFlagListsInNode). */
async function redFlagListsInSql(
  conn: DuckDBConnection,
  ctx: DeriveContext,
  keyedOf: (rows: string, cols: string) => string,
): Promise<AsyncIterable<string>> {
  const keyed = keyedOf('(SELECT g, risk_score, phy_state, safety_rating, red_flag_codes FROM red_flag_rows)', 'r.g, r.risk_score');
  // Passes over filter ranges of at most redFlagPasses.entries entries (a filter is never split). The entries per
  // filter are counted from the distinct (codes, state, rating) of the flagged carriers, each weighed by its number
  // of carriers: the same counts without expanding every carrier's entries.
  const combos = `(SELECT red_flag_codes, phy_state, safety_rating, count(*) AS w FROM red_flag_rows GROUP BY ALL)`;
  const counts = await queryRows(conn, `SELECT f, sum(w)::BIGINT AS n FROM (${keyedOf(combos, 'r.w')}) GROUP BY f ORDER BY f`);
  const ranges: Array<[number, number]> = [];
  let from: number | null = null;
  let acc = 0;
  let last = 0;
  for (const { f, n } of counts) {
    if (from !== null && acc + Number(n) > redFlagPasses.entries) {
      ranges.push([from, last]);
      from = null;
      acc = 0;
    }
    from ??= Number(f);
    acc += Number(n);
    last = Number(f);
  }
  if (from !== null) ranges.push([from, last]);
  // The entries are written once into a file per pass (lib/warehouse/pass-files.ts), not computed again from every
  // flagged carrier by each pass; pass i takes the filters up to its range's last.
  const cuts = ranges.slice(0, -1).map(([, hi]) => hi);
  const dir = path.join(ctx.run.dir, 'derive-passes', RED_FLAG_STORES.lists);
  return mapPasses(
    bucketedPasses(conn, dir, `(${keyed})`, 'f', cuts),
    (source) => `WITH entries AS (
            SELECT f, g, risk_score, ((row_number() OVER (PARTITION BY f ORDER BY g) - 1) // ${RED_FLAG_BLOCK})::INTEGER AS b
            FROM ${source}
          ), blocks AS (
            SELECT f, b, list(g ORDER BY g) AS gs, list(risk_score ORDER BY g) AS scores, count(*) AS n
            FROM entries GROUP BY f, b
          )
          SELECT (f * ${SLOTS} + 1 + b)::INTEGER AS k, json_array(gs, scores)::VARCHAR AS v FROM blocks
          UNION ALL
          SELECT (f * ${SLOTS})::INTEGER, json_array(sum(n)::BIGINT, list(scores[1] ORDER BY b))::VARCHAR FROM blocks GROUP BY f`,
  );
}
