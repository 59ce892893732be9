/**
 * The carrier search's name index, built at FMCSA publish (issue 22: `/api/carriers?name=` without a scan of every
 * name): derive-carrier-name-split.sql splits every carrier's legal and DBA name once into its runs, from which
 * derive-carrier-name-terms.sql writes the terms in (term, answer order), derive-carrier-name-dict.sql their
 * dictionary, and the sets store its pairs and digit runs (carrier-name-sets.ts deriveNameRuns). The terms and the
 * dictionary are parquet-only tables in small row groups, so a query reads the row groups of its terms alone
 * (service/carriers/search-carriers-by-term.sql).
 *
 * On top of them, the packed carrier_name_hits store (layout: ingest/fmcsa/search-store-keys.ts) holds the answer of
 * every frequent term as a query: its matches (the carriers having a term that contains it) ranked and counted once,
 * per state too, so a name search of such a word is a binary search and one or two positioned reads instead of a
 * union and count of hundreds of thousands of postings per request (a common word such as "trucking" matches a
 * seventh of the 4.4 M full-scale carriers). Other queries (fragments, rare words, pages past NAME_HITS_CAP) keep
 * the SQL over the terms.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { hashCanonical } from '../../lib/hash.ts';
import { loadSql, queryRows, withInsertionOrder } from '../../lib/warehouse/duckdb.ts';
import type { PackedSelect } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext, DeriveStep } from '../../lib/warehouse/publish.ts';
import { sortedJoinSql } from '../../lib/warehouse/sorted-list-sql.ts';
import {
  CARRIER_NAME_HITS,
  NAME_HITS_BLOCK,
  NAME_HITS_CAP,
  NAME_HITS_HEADER,
  NAME_HITS_MAX_TERMS,
  NAME_HITS_SLOTS,
  NAME_HITS_TERMS_KEY,
  STATE_KEYS,
} from '../../ingest/fmcsa/search-store-keys.ts';
import { CARRIER_NAME_SETS, NAME_SETS_DIGIT_BLOCK } from '../../ingest/fmcsa/name-sets.ts';
import { nameHitsBatchesInNode, readCarrierOrder } from './carrier-name-hits.ts';
import {
  deriveNameRuns,
  NAME_DIGIT_RUNS_SQL,
  NAME_PAIR_POSTINGS_SQL,
  NAME_SET_POSTINGS_SQL,
  nameSetsBatchesInNode,
} from './carrier-name-sets.ts';

/** Parquet-only tables of the index (listed in the fmcsa domain's tables and parquet tables). */
export const CARRIER_NAME_INDEX_TABLES = ['carrier_name_terms', 'carrier_name_dict'] as const;

/** Rows per row group: a term's range spans few groups, and a group decodes quickly. */
const ROW_GROUP_SIZE = 16_384;

const SPLIT_SQL = loadSql('./derive-carrier-name-split.sql', import.meta.url);
const TERMS_SQL = loadSql('./derive-carrier-name-terms.sql', import.meta.url);
const DICT_SQL = loadSql('./derive-carrier-name-dict.sql', import.meta.url);

/**
 * Which terms get a precomputed answer (at least `minPostings` postings of their own; at most NAME_HITS_MAX_TERMS,
 * the most frequent), and the postings one pass may group (the matches of the terms of a pass are grouped per
 * carrier and ranked in one query, or held by Node; a term is never split), and whether Node computes the records
 * (carrier-name-hits.ts; false: hitsPassSql, the reference the tests compare it with). Tests lower or switch them.
 */
export const nameHitsOptions = { minPostings: 64, passPostings: 3_000_000, node: true };

/** The indexed terms: number qi = position in term order (the reader finds a query by binary search in that order). */
const HIT_TERMS_SQL = (minPostings: number) => `CREATE OR REPLACE TEMP TABLE name_hit_terms AS
  SELECT q, (row_number() OVER (ORDER BY q) - 1)::INTEGER AS qi
  FROM (SELECT term AS q FROM carrier_name_dict WHERE length(term) >= 2 AND n >= ${minPostings}
        ORDER BY n DESC, term LIMIT ${NAME_HITS_MAX_TERMS})`;
/** The dictionary terms each indexed term is contained in (search-carriers-by-term.sql's contains()), with their postings. */
const HIT_PAIRS_SQL = `CREATE OR REPLACE TEMP TABLE name_hit_pairs AS
  SELECT h.q, h.qi, d.term, d.n
  FROM name_hit_terms h JOIN carrier_name_dict d ON contains(d.term, h.q)`;

/**
 * A term's header record: the JSON object {state or '*': matches}, its members in key order ('*' first, then the
 * states ascending), so two publishes of the same rows write the same bytes (json_group_object keeps the order in
 * which its group received the rows, which the parallel aggregation does not fix).
 */
const HEADER_OBJECT = `('{' || ${sortedJoinSql(`to_json(s)::VARCHAR || ':' || n::VARCHAR`, ['s'])} || '}')`;

/**
 * The records of the terms qi in [lo, hi]: search-carriers-by-term.sql's matches, ranks and order for q, numbered
 * over all states and per state; the first NAME_HITS_CAP in blocks, and the header of counts.
 */
function hitsPassSql(lo: number, hi: number): string {
  const stateKey = `1 + (ascii(st[1]) - 65) * 26 + (ascii(st[2]) - 65)`;
  return `WITH hits AS (
      SELECT p.qi, t.dot_number, any_value(t.power_units) AS pu, any_value(t.phy_state) AS st,
        min(CASE WHEN t.flag = 0 AND t.term = p.q THEN 0 WHEN t.flag <= 1 AND starts_with(t.term, p.q) THEN 1 ELSE 2 END) AS rank
      FROM name_hit_pairs p JOIN carrier_name_terms t ON t.term = p.term
      WHERE p.qi BETWEEN ${lo} AND ${hi}
      GROUP BY p.qi, t.dot_number
    ), ranked AS (
      SELECT qi, dot_number, st, regexp_full_match(st, '[A-Z]{2}') AS keyed,
        row_number() OVER (PARTITION BY qi ORDER BY rank, pu DESC NULLS LAST, dot_number) - 1 AS pos_all,
        row_number() OVER (PARTITION BY qi, st ORDER BY rank, pu DESC NULLS LAST, dot_number) - 1 AS pos_st
      FROM hits
    ), entries AS (
      SELECT qi, 0 AS sk, pos_all AS pos, dot_number FROM ranked WHERE pos_all < ${NAME_HITS_CAP}
      UNION ALL
      SELECT qi, ${stateKey}, pos_st, dot_number FROM ranked WHERE keyed AND pos_st < ${NAME_HITS_CAP}
    ), counts AS (
      SELECT qi, '*' AS s, count(*) AS n FROM ranked GROUP BY qi
      UNION ALL
      SELECT qi, st, count(*) FROM ranked WHERE keyed GROUP BY qi, st
    )
    SELECT ((qi * ${STATE_KEYS} + sk) * ${NAME_HITS_SLOTS} + pos // ${NAME_HITS_BLOCK})::INTEGER AS k,
      to_json(list(dot_number ORDER BY pos))::VARCHAR AS v
    FROM entries GROUP BY qi, sk, pos // ${NAME_HITS_BLOCK}
    UNION ALL
    SELECT (qi * ${STATE_KEYS} * ${NAME_HITS_SLOTS} + ${NAME_HITS_HEADER})::INTEGER, ${HEADER_OBJECT}
    FROM counts GROUP BY qi`;
}

/**
 * What the index is computed by (its SQL, row-group size and the hits store's layout): a previous snapshot's index
 * over the same carriers rows is reused only when its stamp equals this one, so a change of the SQL rebuilds it
 * without a version bump.
 */
export const CARRIER_NAME_INDEX_STAMP = hashCanonical({
  split: SPLIT_SQL,
  terms: TERMS_SQL,
  dict: DICT_SQL,
  row_group_size: ROW_GROUP_SIZE,
  hits: [HIT_TERMS_SQL(nameHitsOptions.minPostings), HIT_PAIRS_SQL, hitsPassSql(0, 0), NAME_HITS_TERMS_KEY],
  sets: [NAME_SET_POSTINGS_SQL, NAME_PAIR_POSTINGS_SQL, NAME_DIGIT_RUNS_SQL, NAME_SETS_DIGIT_BLOCK, 3],
});

/** The SQL of the hits store (tests run it over hand-made names): temp tables of terms and pairs, then one pass. */
export const nameHitsSql = { terms: HIT_TERMS_SQL, pairs: HIT_PAIRS_SQL, pass: hitsPassSql };

/**
 * The index's tables as the publish derives them (tests make tables of them): `split` creates the temp table
 * carrier_name_split, which `terms` reads, and `dict` reads carrier_name_terms.
 */
export const nameIndexSql = { split: SPLIT_SQL, terms: TERMS_SQL, dict: DICT_SQL };

/** The temp tables of a derive of the index, dropped when it ends (a failed one included). */
const NAME_INDEX_TEMP_TABLES = [
  'carrier_name_split',
  'name_pair_postings',
  'name_digit_runs',
  'name_pairs',
  'name_set_records',
  'name_hit_records',
  'name_hit_pairs',
  'name_hit_terms',
];

/**
 * Writes carrier_name_terms and carrier_name_dict from one split of the carriers' names, reads the sets store's
 * pairs and digit runs off the same split (then drops it: 8.9 M rows at full scale), then writes the hits store and
 * the sets store; `step` times each part (name_index.split, .terms, ...).
 */
export async function deriveCarrierNameIndex(ctx: DeriveContext, conn: DuckDBConnection, step: DeriveStep): Promise<void> {
  const opts = { columns: 'query', rowGroupSize: ROW_GROUP_SIZE } as const;
  try {
    await step('name_index.split', () => conn.run(SPLIT_SQL));
    // The terms' sort (14.2 M postings with their tails at full scale) spills under publish's 1 GB: with insertion
    // order kept, DuckDB sorts and writes it in 9.6 s on 2 threads; without it (publish's setting), 17.3 s on about
    // one (measured alone on the full-scale carriers). The file's rows are the same either way: ORDER BY term. The
    // session's setting is restored.
    await step('name_index.terms', () =>
      withInsertionOrder(conn, true, () => ctx.replaceParquetTable('carrier_name_terms', TERMS_SQL, opts)),
    );
    await step('name_index.dict', () => ctx.replaceParquetTable('carrier_name_dict', DICT_SQL, opts));
    await step('name_index.runs', () => deriveNameRuns(conn));
    await conn.run('DROP TABLE carrier_name_split');
    await step('name_index.hit_terms', async () => {
      await conn.run(HIT_TERMS_SQL(nameHitsOptions.minPostings));
      await conn.run(HIT_PAIRS_SQL);
    });
    // Passes over term ranges of at most passPostings postings (a term is never split).
    const sizes = await queryRows(conn, `SELECT qi, sum(n)::BIGINT AS n FROM name_hit_pairs GROUP BY qi ORDER BY qi`);
    const ranges: Array<[number, number]> = [];
    let from: number | null = null;
    let acc = 0;
    let last = 0;
    for (const { qi, n } of sizes) {
      if (from !== null && acc + Number(n) > nameHitsOptions.passPostings) {
        ranges.push([from, last]);
        from = null;
        acc = 0;
      }
      from ??= Number(qi);
      acc += Number(n);
      last = Number(qi);
    }
    if (from !== null) ranges.push([from, last]);
    const termsRecord = `SELECT ${NAME_HITS_TERMS_KEY}::INTEGER AS k, coalesce(to_json(list(q ORDER BY qi)), '[]')::VARCHAR AS v FROM name_hit_terms`;
    // The carriers' answer order, read once for the hits and the sets (null when the DOTs do not allow it).
    const order = await readCarrierOrder(conn);
    // The records computed in Node from the postings (carrier-name-hits.ts: the same bytes as hitsPassSql, without
    // grouping and sorting every hit twice in DuckDB); hitsPassSql when the carriers' DOTs do not allow it.
    const inNode = nameHitsOptions.node ? await nameHitsBatchesInNode(conn, ranges, order) : null;
    const passes: PackedSelect = inNode
      ? (async function* () {
          yield* inNode;
          yield termsRecord;
        })()
      : [...ranges.map(([lo, hi]) => hitsPassSql(lo, hi)), termsRecord];
    await step('name_index.hits', () => ctx.writePacked(CARRIER_NAME_HITS, passes));
    // The sets store (ingest/fmcsa/name-sets.ts): parts of words and rare words without a query. Not written when
    // the DOTs or keys do not allow it; the search then keeps the SQL over the terms.
    await step('name_index.sets', async () => {
      const sets = order ? await nameSetsBatchesInNode(conn, order) : null;
      if (sets) await ctx.writePacked(CARRIER_NAME_SETS, sets);
    });
  } finally {
    for (const t of NAME_INDEX_TEMP_TABLES) await conn.run(`DROP TABLE IF EXISTS ${t}`);
  }
}

/**
 * Links both tables and the hits store from the previous snapshot (its carriers rows being this run's, and its stamp
 * this one): true when all were linked. A half-linked index never stays: the caller derives all again on false.
 */
export async function linkPreviousCarrierNameIndex(ctx: DeriveContext): Promise<boolean> {
  for (const t of CARRIER_NAME_INDEX_TABLES) if (!(await ctx.linkPreviousParquetTable(t))) return false;
  return (await ctx.linkPreviousPacked(CARRIER_NAME_HITS)) && ctx.linkPreviousPacked(CARRIER_NAME_SETS);
}
