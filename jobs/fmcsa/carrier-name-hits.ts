/**
 * The records of the carrier_name_hits store (layout: ingest/fmcsa/search-store-keys.ts) computed in Node from one
 * stream of postings per pass, instead of carrier-name-index.ts's `hitsPassSql` (issue 22 item 4: at full scale that
 * SQL grouped ~14.5 M (term, carrier) hits and sorted them twice, once over all states and once per state, about
 * 13.6 CPU-s, half of the name index). The same records, byte for byte (test/fmcsa/carrier-name-index.test.ts
 * compares both over crafted names):
 *
 *  - the carriers' answer order (power_units DESC NULLS LAST, dot_number) is computed once, by one DuckDB sort of
 *    4.4 M integer keys: a carrier's position `ord` in it, and its state key (STATE_KEYS numbering, 0 for a state
 *    that is not 2 letters A-Z);
 *  - each pass streams (qi, dot_number, rank) of its terms' postings from DuckDB, the rank being hitsPassSql's own
 *    CASE expression; Node keeps per carrier the least rank (hitsPassSql's min per (qi, dot_number)), orders the
 *    carriers of a term by (rank, ord) with a typed-array sort (a term of many postings: by walking one bitmap of
 *    ords per rank, nameHitsWalk), and numbers them over all states and per state in one
 *    walk: the first NAME_HITS_CAP of each list in blocks of NAME_HITS_BLOCK and the header of counts ('*' first,
 *    then the states ascending, which is state-key order).
 *
 * It needs every dot_number of carriers distinct and in [0, MAX_DOT] (an array indexed by DOT maps a DOT to its
 * order); otherwise `computeNameHitsInNode` returns false and the caller writes the store with hitsPassSql.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { NAME_HITS_BLOCK, NAME_HITS_CAP, NAME_HITS_HEADER, NAME_HITS_SLOTS, STATE_KEYS } from '../../ingest/fmcsa/search-store-keys.ts';
import { writeRecordTable } from './record-table.ts';

/** DOTs above this (or below 0) send the store to the SQL path: the DOT → order array stays under 64 MB. */
export const MAX_DOT = 16_000_000;

/** hitsPassSql's rank of a posting t of the term p.q: 0 whole name, 1 name prefix, 2 contains. */
const RANK_SQL = `CASE WHEN t.flag = 0 AND t.term = p.q THEN 0 WHEN t.flag <= 1 AND starts_with(t.term, p.q) THEN 1 ELSE 2 END`;

/** The carriers in answer order, with their state keys (hitsPassSql's `stateKey` for a state matching [A-Z]{2}). */
const ORDER_SQL = `SELECT dot_number,
    (CASE WHEN regexp_full_match(phy_state, '[A-Z]{2}') THEN 1 + (ascii(phy_state[1]) - 65) * 26 + (ascii(phy_state[2]) - 65) ELSE 0 END)::SMALLINT AS sk
  FROM carriers ORDER BY power_units DESC NULLS LAST, dot_number`;

/** The postings of the terms qi in [lo, hi] (name_hit_pairs joined to carrier_name_terms), in no order. */
export function nameHitPostingsSql(lo: number, hi: number): string {
  return `SELECT p.qi, t.dot_number, (${RANK_SQL})::UTINYINT AS rank
    FROM name_hit_pairs p JOIN carrier_name_terms t ON t.term = p.term
    WHERE p.qi BETWEEN ${lo} AND ${hi}`;
}

/** The carriers' answer order: DOT and state key by position, position by DOT. */
export interface CarrierOrder {
  dotOf: Int32Array;
  stateOf: Int16Array;
  ordOf: Int32Array;
}

/** Streams ORDER_SQL into typed arrays; null when a DOT is out of [0, MAX_DOT] or repeated. */
export async function readCarrierOrder(conn: DuckDBConnection): Promise<CarrierOrder | null> {
  const [[n, min, max]] = (
    await conn.runAndReadAll(`SELECT count(*)::INTEGER, min(dot_number), max(dot_number) FROM carriers`)
  ).getRows() as Array<[number, number | null, number | null]>;
  // rank · n + ord must fit an Int32 (TermWalk's keys).
  if (n > 0 && (min == null || max == null || min < 0 || max > MAX_DOT || 3 * n > 2 ** 31 - 1)) return null;
  const dotOf = new Int32Array(n);
  const stateOf = new Int16Array(n);
  const ordOf = new Int32Array((max ?? 0) + 1).fill(-1);
  const result = await conn.stream(ORDER_SQL);
  let at = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const dots = chunk.getColumnVector(0);
    const states = chunk.getColumnVector(1);
    const rows = chunk.rowCount;
    for (let i = 0; i < rows; i++) {
      const dot = dots.getItem(i) as number;
      if (at >= n || ordOf[dot] !== -1) return null;
      ordOf[dot] = at;
      dotOf[at] = dot;
      stateOf[at] = states.getItem(i) as number;
      at++;
    }
  }
  return at === n ? { dotOf, stateOf, ordOf } : null;
}

/** The state (two letters) of a state key 1..676. */
function stateOfKey(sk: number): string {
  return String.fromCharCode(65 + Math.floor((sk - 1) / 26), 65 + ((sk - 1) % 26));
}

/** Appends the blocks of the first `n` of `dots` (the list of term qi in state key sk) to `out`. */
function pushBlocks(out: Array<[number, string]>, qi: number, sk: number, dots: Int32Array, n: number): void {
  for (let b = 0; b * NAME_HITS_BLOCK < n; b++) {
    // A typed array joins its integers as to_json(list(dot_number)) writes them: no spaces, no quotes.
    const text = dots.subarray(b * NAME_HITS_BLOCK, Math.min(n, (b + 1) * NAME_HITS_BLOCK)).join(',');
    out.push([(qi * STATE_KEYS + sk) * NAME_HITS_SLOTS + b, `[${text}]`]);
  }
}

/**
 * From how many postings a term's carriers are put in answer order by marking one bitmap per rank and walking them
 * (rank 0, then 1, then 2, each in ord order, less the carriers of a lower rank) instead of sorting rank · n + ord
 * (null: an eighth of a bitmap's words, where clearing and walking three bitmaps costs less than the sort). The
 * same order either way. Tests force either path.
 */
export const nameHitsWalk: { bitmapFrom: number | null } = { bitmapFrom: null };

/** Reusable per-term state of a pass: the sort keys of a term's postings, and per state key its count and first DOTs. */
class TermWalk {
  private readonly done: Uint8Array;
  private keys = new Int32Array(1 << 16);
  private readonly counts = new Int32Array(STATE_KEYS);
  private readonly lists: Int32Array[] = [];
  private readonly all = new Int32Array(NAME_HITS_CAP);
  private total = 0;
  private bitmaps: [Uint32Array, Uint32Array, Uint32Array] | null = null;

  constructor(private readonly order: CarrierOrder) {
    this.done = new Uint8Array(order.dotOf.length);
  }

  /** The next carrier in answer order (each carrier once): numbered over all states and in its state. */
  private take(o: number): void {
    const dot = this.order.dotOf[o]!;
    if (this.total < NAME_HITS_CAP) this.all[this.total] = dot;
    this.total++;
    const sk = this.order.stateOf[o]!;
    if (sk === 0) return;
    const c = this.counts[sk]!;
    if (c < NAME_HITS_CAP) {
      let list = this.lists[sk];
      if (!list) this.lists[sk] = list = new Int32Array(NAME_HITS_CAP);
      list[c] = dot;
    }
    this.counts[sk] = c + 1;
  }

  /** The records of term qi from its postings (DOTs and ranks at `idx` positions from..to-1 of the pass arrays). */
  records(qi: number, dots: Int32Array, ranks: Uint8Array, idx: Int32Array, from: number, to: number, out: Array<[number, string]>) {
    const { ordOf, dotOf } = this.order;
    const n = dotOf.length;
    const words = (n + 31) >>> 5;
    this.counts.fill(0);
    this.total = 0;
    if (to - from >= (nameHitsWalk.bitmapFrom ?? Math.max(1024, words >>> 3))) {
      // One bitmap of ords per rank; a carrier is taken at its least rank (hitsPassSql's min per carrier), and within
      // a rank in ord order, which is the answer's order (rank, power_units DESC NULLS LAST, dot_number).
      this.bitmaps ??= [new Uint32Array(words), new Uint32Array(words), new Uint32Array(words)];
      const [r0, r1, r2] = this.bitmaps;
      r0.fill(0);
      r1.fill(0);
      r2.fill(0);
      for (let j = from; j < to; j++) {
        const p = idx[j]!;
        const o = ordOf[dots[p]!]!;
        const rank = ranks[p]!;
        (rank === 0 ? r0 : rank === 1 ? r1 : r2)[o >>> 5]! |= 1 << (o & 31);
      }
      for (let rank = 0; rank < 3; rank++) {
        for (let w = 0; w < words; w++) {
          let word = rank === 0 ? r0[w]! : rank === 1 ? r1[w]! & ~r0[w]! : r2[w]! & ~(r0[w]! | r1[w]!);
          while (word !== 0) {
            const low = word & -word;
            this.take(w * 32 + (31 - Math.clz32(low)));
            word ^= low;
          }
        }
      }
    } else {
      if (to - from > this.keys.length) this.keys = new Int32Array(to - from);
      // One key per posting, rank · n + ord: in key order a carrier comes first with its least rank (hitsPassSql's
      // min per carrier), and the carriers in the answer's order (rank, power_units DESC NULLS LAST, dot_number).
      const keys = this.keys.subarray(0, to - from);
      for (let j = from; j < to; j++) {
        const p = idx[j]!;
        keys[j - from] = ranks[p]! * n + ordOf[dots[p]!]!;
      }
      keys.sort();
      const done = this.done;
      for (let i = 0; i < keys.length; i++) {
        const o = keys[i]! % n;
        if (done[o]) continue;
        done[o] = 1;
        this.take(o);
      }
      for (let i = 0; i < keys.length; i++) done[keys[i]! % n] = 0;
    }
    const total = this.total;
    // A term without postings has no record (hitsPassSql groups none); every indexed term has some.
    if (total === 0) return;
    pushBlocks(out, qi, 0, this.all, Math.min(total, NAME_HITS_CAP));
    let header = `{"*":${total}`;
    for (let sk = 1; sk < STATE_KEYS; sk++) {
      const c = this.counts[sk]!;
      if (c === 0) continue;
      pushBlocks(out, qi, sk, this.lists[sk]!, Math.min(c, NAME_HITS_CAP));
      header += `,"${stateOfKey(sk)}":${c}`;
    }
    out.push([qi * STATE_KEYS * NAME_HITS_SLOTS + NAME_HITS_HEADER, `${header}}`]);
  }
}

/** Rows of (INTEGER, INTEGER, small integer) postings in typed arrays: `n` rows, columns a, b, c. */
export interface Postings {
  a: Int32Array;
  b: Int32Array;
  c: Uint8Array;
  n: number;
}

/** Streams `sql`'s three columns (INTEGER, INTEGER, UTINYINT) into typed arrays, grown by doubling. */
export async function streamPostings(conn: DuckDBConnection, sql: string): Promise<Postings> {
  let cap = 1 << 16;
  let a = new Int32Array(cap);
  let b = new Int32Array(cap);
  let c = new Uint8Array(cap);
  let n = 0;
  const result = await conn.stream(sql);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const rows = chunk.rowCount;
    if (n + rows > cap) {
      while (n + rows > cap) cap *= 2;
      const grow = <T extends Int32Array | Uint8Array>(from: T, to: T): T => {
        to.set(from);
        return to;
      };
      a = grow(a, new Int32Array(cap));
      b = grow(b, new Int32Array(cap));
      c = grow(c, new Uint8Array(cap));
    }
    const va = chunk.getColumnVector(0);
    const vb = chunk.getColumnVector(1);
    const vc = chunk.getColumnVector(2);
    for (let i = 0; i < rows; i++, n++) {
      a[n] = va.getItem(i) as number;
      b[n] = vb.getItem(i) as number;
      c[n] = vc.getItem(i) as number;
    }
  }
  return { a, b, c, n };
}

/**
 * The postings grouped by their first column (a counting sort on a - lo, for a in [lo, lo + keys)): the rows of key
 * k are idx[starts[k - lo] .. starts[k - lo + 1]).
 */
export function groupPostings(p: Postings, lo: number, keys: number): { starts: Int32Array; idx: Int32Array } {
  const starts = new Int32Array(keys + 1);
  for (let i = 0; i < p.n; i++) starts[p.a[i]! - lo + 1]!++;
  for (let k = 1; k <= keys; k++) starts[k]! += starts[k - 1]!;
  const fill = starts.slice(0, keys);
  const idx = new Int32Array(p.n);
  for (let i = 0; i < p.n; i++) idx[fill[p.a[i]! - lo]!++] = i;
  return { starts, idx };
}

/** The records of the terms qi in [lo, hi] (name_hit_terms and name_hit_pairs being in place), as (key, value). */
async function passRecords(conn: DuckDBConnection, walk: TermWalk, lo: number, hi: number): Promise<Array<[number, string]>> {
  // (qi, dot_number, rank) postings, grouped by term.
  const p = await streamPostings(conn, nameHitPostingsSql(lo, hi));
  const { starts, idx } = groupPostings(p, lo, hi - lo + 1);
  const out: Array<[number, string]> = [];
  for (let qi = lo; qi <= hi; qi++) walk.records(qi, p.b, p.c, idx, starts[qi - lo]!, starts[qi - lo + 1]!, out);
  return out;
}

/**
 * The hits store's batches for writePacked, computed in Node: per pass [lo, hi] of term numbers, its records are
 * appended to the temp table name_hit_records, then selected. Null (nothing written) when the carriers' DOTs do not
 * allow it (see the module comment): the caller uses hitsPassSql.
 */
export async function nameHitsBatchesInNode(
  conn: DuckDBConnection,
  passes: ReadonlyArray<readonly [number, number]>,
  readOrder: CarrierOrder | null | undefined = undefined,
): Promise<AsyncIterable<string> | null> {
  const order = readOrder === undefined ? await readCarrierOrder(conn) : readOrder;
  if (!order) return null;
  const walk = new TermWalk(order);
  return (async function* () {
    for (const [lo, hi] of passes) {
      yield await writeRecordTable(conn, 'name_hit_records', await passRecords(conn, walk, lo, hi));
    }
  })();
}
