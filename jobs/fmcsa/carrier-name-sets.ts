/**
 * The records of the carrier_name_sets store (layout and search: ingest/fmcsa/name-sets.ts), computed in Node at FMCSA
 * publish from the name index's postings (carrier_name_terms) and the carriers' answer order (carrier-name-hits.ts
 * readCarrierOrder): per dictionary term and per pair of adjacent runs its carriers as sets of ords (contains,
 * first, whole), per term its pairs, per state its carriers, the DOT of every ord, and the runs of digits alone with
 * their carriers. Each kind of set is one stream of (number, DOT, flag) postings, a counting sort by number and a
 * typed-array sort of each number's ords (a number of many postings: three bitmaps marked, no sort; nameSetsOptions):
 * no grouping in DuckDB beyond numbering the pairs.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  digitsBlockKey,
  dotBlockKey,
  encodeDotBlock,
  encodeOrdBits,
  encodeOrdSet,
  NAME_SETS_DIGIT_BLOCK,
  NAME_SETS_DOT_BLOCK,
  NAME_SETS_HEADER_KEY,
  nameSetKeysFit,
  pairListKey,
  pairSetKey,
  stateSetKey,
  type TermSetKind,
  termSetKey,
} from '../../ingest/fmcsa/name-sets.ts';
import { queryRows } from '../../lib/warehouse/duckdb.ts';
import { type CarrierOrder, groupPostings, streamPostings } from './carrier-name-hits.ts';
import { writeRecordTable } from './record-table.ts';

/** Every posting with its term's number (position in the dictionary's term order). */
export const NAME_SET_POSTINGS_SQL = `SELECT d.i, t.dot_number, t.flag
  FROM carrier_name_terms t
  JOIN (SELECT term, (row_number() OVER (ORDER BY term) - 1)::INTEGER AS i FROM carrier_name_dict) d ON d.term = t.term`;

/**
 * The pairs' postings as the temp table name_pair_postings (a, sep, b, dot_number, flag), from the split names
 * (carrier_name_split, derive-carrier-name-split.sql) and the dictionary: each part i of a name but its last, when it
 * is a term (number a), with the separator run after it and the next part when that is a term too (number b). flag 0
 * when the pair is the whole name (two parts), 1 when it starts the name (i = 1), else 2. A part followed by digits
 * alone, or by nothing, has no pair. The same rows as reading the separator and the next run off each posting's tail.
 */
export const NAME_PAIR_POSTINGS_SQL = `CREATE OR REPLACE TEMP TABLE name_pair_postings AS
  WITH d AS (SELECT term, (row_number() OVER (ORDER BY term) - 1)::INTEGER AS i FROM carrier_name_dict),
  firsts AS (
    SELECT dot_number, parts, seps, unnest(parts[:-2]) AS term, generate_subscripts(parts[:-2], 1) AS i
    FROM carrier_name_split WHERE len(parts) >= 2
  ), p AS (
    SELECT term, dot_number, seps[i] AS sep, parts[i + 1] AS b,
      (CASE WHEN i = 1 AND len(parts) = 2 THEN 0 WHEN i = 1 THEN 1 ELSE 2 END)::UTINYINT AS flag
    FROM firsts
  )
  SELECT da.i AS a, p.sep, db.i AS b, p.dot_number, p.flag
  FROM p JOIN d da ON da.term = p.term JOIN d db ON db.term = p.b`;
/** The distinct pairs, numbered in (a, sep, b) order, as the temp table name_pairs. */
const NAME_PAIRS_SQL = `CREATE OR REPLACE TEMP TABLE name_pairs AS
  SELECT a, sep, b, (row_number() OVER (ORDER BY a, sep, b) - 1)::INTEGER AS pi
  FROM (SELECT DISTINCT a, sep, b FROM name_pair_postings)`;
/**
 * Every run of digits alone of every lower-cased legal and DBA name (the parts the terms leave out), with its carrier,
 * as the temp table name_digit_runs: a phrase with a number is narrowed to the carriers having that number. A part is
 * a run of [a-z0-9], so regexp_full_match of the digits tells it (DuckDB's ltrim of a character set cost ten times as
 * much).
 */
export const NAME_DIGIT_RUNS_SQL = `CREATE OR REPLACE TEMP TABLE name_digit_runs AS
  SELECT r, dot_number FROM (SELECT dot_number, unnest(parts) AS r FROM carrier_name_split)
  WHERE regexp_full_match(r, '[0-9]+')`;

/**
 * The temp tables the sets store is computed from (name_pair_postings, name_digit_runs), read off the split names
 * while carrier_name_split and carrier_name_dict exist; nameSetsBatchesInNode reads them, the caller drops them.
 */
export async function deriveNameRuns(conn: DuckDBConnection): Promise<void> {
  await conn.run(NAME_PAIR_POSTINGS_SQL);
  await conn.run(NAME_DIGIT_RUNS_SQL);
}

/** The digit runs' blocks (runs ascending, a run's ords ascending and distinct), streamed from name_digit_runs. */
async function digitBlocks(conn: DuckDBConnection, order: CarrierOrder): Promise<Array<{ runs: string[]; ords: number[] }>> {
  const blocks: Array<{ runs: string[]; ords: number[] }> = [];
  let block = { runs: [] as string[], ords: [] as number[] };
  let run: string | null = null;
  let ords: number[] = [];
  const flush = () => {
    if (run === null) return;
    ords.sort((a, b) => a - b);
    for (let i = 0; i < ords.length; i++) {
      if (i > 0 && ords[i] === ords[i - 1]) continue;
      block.runs.push(run);
      block.ords.push(ords[i]!);
      if (block.runs.length === NAME_SETS_DIGIT_BLOCK) {
        blocks.push(block);
        block = { runs: [], ords: [] };
      }
    }
    ords = [];
  };
  const result = await conn.stream(`SELECT r, dot_number FROM name_digit_runs ORDER BY r`);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const rv = chunk.getColumnVector(0);
    const dv = chunk.getColumnVector(1);
    // rowCount is a native call: read once per chunk, not per row.
    for (let i = 0, rows = chunk.rowCount; i < rows; i++) {
      const r = rv.getItem(i) as string;
      if (r !== run) {
        flush();
        run = r;
      }
      ords.push(order.ordOf[dv.getItem(i) as number]!);
    }
  }
  flush();
  if (block.runs.length) blocks.push(block);
  return blocks;
}

/** Every pair posting with its pair's number. */
const PAIR_SET_POSTINGS_SQL = `SELECT n.pi, p.dot_number, p.flag FROM name_pair_postings p JOIN name_pairs n USING (a, sep, b)`;

/**
 * The store's selects for writePacked (each pass's records appended to the temp table name_set_records, read back
 * before the next pass replaces it), or null when its keys do not fit (the search then keeps the SQL over the terms).
 * Reads carrier_name_terms, carrier_name_dict and deriveNameRuns's temp tables.
 */
export async function nameSetsBatchesInNode(conn: DuckDBConnection, order: CarrierOrder): Promise<AsyncIterable<string> | null> {
  const terms = (await queryRows(conn, `SELECT term FROM carrier_name_dict ORDER BY term`)).map((r) => String(r.term));
  const n = order.dotOf.length;
  await conn.run(NAME_PAIRS_SQL);
  const [{ pairs }] = await queryRows(conn, `SELECT count(*)::INTEGER AS pairs FROM name_pairs`);
  const digits = await digitBlocks(conn, order);
  if (!nameSetKeysFit(n, terms.length, Number(pairs), digits.length)) return null;
  const header = { n, terms, pairs: true, pair_count: Number(pairs), digit_firsts: digits.map((b) => b.runs[0]!) };
  return (async function* () {
    // Header, states and DOT blocks.
    const first: Array<[number, string]> = [[NAME_SETS_HEADER_KEY, JSON.stringify(header)]];
    const perState = new Map<number, number[]>();
    for (let o = 0; o < n; o++) {
      const sk = order.stateOf[o]!;
      if (sk === 0) continue;
      let l = perState.get(sk);
      if (!l) perState.set(sk, (l = []));
      l.push(o);
    }
    for (const sk of [...perState.keys()].sort((a, b) => a - b)) {
      const text = encodeOrdSet(Uint32Array.from(perState.get(sk)!), n);
      if (text) first.push([stateSetKey(sk), text]);
    }
    perState.clear();
    for (let b = 0; b * NAME_SETS_DOT_BLOCK < n; b++)
      first.push([
        dotBlockKey(b),
        encodeDotBlock(order.dotOf.subarray(b * NAME_SETS_DOT_BLOCK, Math.min(n, (b + 1) * NAME_SETS_DOT_BLOCK))),
      ]);
    yield await writeRecordTable(conn, 'name_set_records', first);
    first.length = 0;
    yield await writeRecordTable(
      conn,
      'name_set_records',
      await setRecords(conn, order, NAME_SET_POSTINGS_SQL, terms.length, (i, kind) => termSetKey(i, kind)),
    );
    // Pair lists: per first term, its pairs in (sep, b) order.
    const lists: Array<[number, string]> = [];
    let a = -1;
    let list: Array<[string, number, number]> = [];
    const flush = () => {
      if (a >= 0) lists.push([pairListKey(header, a), JSON.stringify(list)]);
    };
    for (const r of await queryRows(conn, `SELECT a, sep, b, pi FROM name_pairs ORDER BY pi`)) {
      if (Number(r.a) !== a) {
        flush();
        a = Number(r.a);
        list = [];
      }
      list.push([String(r.sep), Number(r.b), Number(r.pi)]);
    }
    flush();
    yield await writeRecordTable(conn, 'name_set_records', lists);
    yield await writeRecordTable(
      conn,
      'name_set_records',
      digits.map((b, i) => [digitsBlockKey(header, i), JSON.stringify(b)] as [number, string]),
    );
    digits.length = 0;
    yield await writeRecordTable(
      conn,
      'name_set_records',
      await setRecords(conn, order, PAIR_SET_POSTINGS_SQL, Number(pairs), (i, kind) => pairSetKey(header, i, kind)),
    );
  })();
}

/**
 * From how many postings a term's sets are marked in bitmaps instead of sorted (null: an eighth of a bitmap's words,
 * where clearing and scanning three bitmaps costs less than sorting the postings). Tests force either path.
 */
export const nameSetsOptions: { bitmapFrom: number | null } = { bitmapFrom: null };

/**
 * The contains / first / whole set of every term (or pair) with postings, from `sql`'s (number, dot_number, flag)
 * postings: flag 0 whole name, 1 name start, else 2. A carrier is in `contains` for any flag, in `first` for a flag
 * 0 or 1, in `whole` for a flag 0 (its least flag decides). The same records by either path: a term's postings sorted
 * as ord * 4 + flag, or (a term of many postings) marked in three bitmaps, with no sort.
 */
async function setRecords(
  conn: DuckDBConnection,
  order: CarrierOrder,
  sql: string,
  termCount: number,
  keyOf: (i: number, kind: TermSetKind) => number,
): Promise<Array<[number, string]>> {
  const n = order.dotOf.length;
  const words = (n + 31) >>> 5;
  const bitmapFrom = nameSetsOptions.bitmapFrom ?? Math.max(1024, words >>> 3);
  // (number, dot_number, flag) postings grouped by number; the DOTs become ords.
  const p = await streamPostings(conn, sql);
  const ords = new Uint32Array(p.n);
  for (let i = 0; i < p.n; i++) ords[i] = order.ordOf[p.b[i]!]!;
  const flags = p.c;
  const { starts, idx } = groupPostings(p, 0, termCount);
  const out: Array<[number, string]> = [];
  const push = (t: number, kind: TermSetKind, text: string | null) => {
    if (text) out.push([keyOf(t, kind), text]);
  };
  let buf = new Uint32Array(1 << 16);
  const sets = { contains: new Uint32Array(1 << 16), first: new Uint32Array(1 << 16), whole: new Uint32Array(1 << 16) };
  let bitmaps: { contains: Uint32Array; first: Uint32Array; whole: Uint32Array } | null = null;
  for (let t = 0; t < termCount; t++) {
    const from = starts[t]!;
    const to = starts[t + 1]!;
    if (to - from >= bitmapFrom && to > from) {
      bitmaps ??= { contains: new Uint32Array(words), first: new Uint32Array(words), whole: new Uint32Array(words) };
      const { contains, first, whole } = bitmaps;
      contains.fill(0);
      first.fill(0);
      whole.fill(0);
      let c = 0;
      let f = 0;
      let w = 0;
      for (let j = from; j < to; j++) {
        const row = idx[j]!;
        const o = ords[row]!;
        const flag = flags[row]!;
        const at = o >>> 5;
        const bit = 1 << (o & 31);
        if ((contains[at]! & bit) === 0) {
          contains[at]! |= bit;
          c++;
        }
        if (flag <= 1 && (first[at]! & bit) === 0) {
          first[at]! |= bit;
          f++;
        }
        if (flag === 0 && (whole[at]! & bit) === 0) {
          whole[at]! |= bit;
          w++;
        }
      }
      push(t, 'contains', encodeOrdBits(contains, c, n));
      push(t, 'first', encodeOrdBits(first, f, n));
      push(t, 'whole', encodeOrdBits(whole, w, n));
      continue;
    }
    if (to - from > buf.length) {
      buf = new Uint32Array(to - from);
      sets.contains = new Uint32Array(to - from);
      sets.first = new Uint32Array(to - from);
      sets.whole = new Uint32Array(to - from);
    }
    for (let j = from; j < to; j++) {
      const row = idx[j]!;
      buf[j - from] = ords[row]! * 4 + flags[row]!;
    }
    // Sorted once: a carrier's first entry has its least flag.
    const keys = buf.subarray(0, to - from).sort();
    let c = 0;
    let f = 0;
    let w = 0;
    let last = -1;
    for (let j = 0; j < keys.length; j++) {
      const ord = keys[j]! >>> 2;
      if (ord === last) continue;
      last = ord;
      const flag = keys[j]! & 3;
      sets.contains[c++] = ord;
      if (flag <= 1) sets.first[f++] = ord;
      if (flag === 0) sets.whole[w++] = ord;
    }
    push(t, 'contains', encodeOrdSet(sets.contains.subarray(0, c), n));
    push(t, 'first', encodeOrdSet(sets.first.subarray(0, f), n));
    push(t, 'whole', encodeOrdSet(sets.whole.subarray(0, w), n));
  }
  return out;
}
