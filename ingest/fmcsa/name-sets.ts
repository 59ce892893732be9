/**
 * The carrier_name_sets store (issue 22 item 2: a name search by a part of a word, `/api/carriers?name=ruck`, without
 * grouping and counting hundreds of thousands of postings per request). Written at FMCSA publish by
 * jobs/fmcsa/carrier-name-sets.ts from the name index (carrier_name_terms), read by service/carriers/carriers.queries.ts;
 * this module holds the layout both sides share, and the search over it (pure: a record getter in, DOTs out).
 *
 * Every carrier has an ordinal `ord`: its position in the search's answer order (power_units DESC NULLS LAST,
 * dot_number). A set of carriers is a set of ords, held as a sorted list or a bitmap of one bit per ord, so a union
 * or an intersection is a word-wise OR / AND, a count is a popcount, and a page is the set's first bits from an
 * offset: already in answer order.
 *
 * Records (a packed store: integer key, text value):
 *   NAME_SETS_HEADER_KEY      {"n": carriers, "terms": [the dictionary's terms, in term order], "pairs": true}
 *   stateSetKey(sk)           the carriers whose phy_state is the 2-letter state of state key sk (1..676)
 *   dotBlockKey(b)            the DOTs of ords b·NAME_SETS_DOT_BLOCK onwards (Int32, little-endian)
 *   termSetKey(i, kind)       per dictionary term i: `contains` every carrier with the term in its legal or DBA
 *                             name, `first` those whose legal or DBA name starts with it (a posting of flag 0 or 1),
 *                             `whole` those whose legal or DBA name is it (flag 0)
 *   pairListKey(i)            the pairs starting with term i, [separator run, next term, pair number]: two adjacent
 *                             runs of a name, both with a letter
 *   pairSetKey(p, kind)       per pair p: `contains` every carrier with the pair in its legal or DBA name, `first`
 *                             those whose name starts with it, `whole` those whose name is it
 *   digitsBlockKey(b)         the runs of digits alone of every name (the runs the terms leave out), ascending, each
 *                             with its carrier's ord: {"runs": [...], "ords": [...]}, NAME_SETS_DIGIT_BLOCK a block;
 *                             the header's `digit_firsts` holds each block's first run
 * A set's text is `L<count>:<base64 of the sorted ords, Uint32 LE>` or `B<count>:<base64 of the bitmap, Uint32 LE
 * words>`, whichever is smaller; an empty set has no record.
 *
 * The search (`nameSetsPage`) gives search-carriers-by-term.sql's answer for a word of [a-z0-9] with a letter: the
 * carriers having a term that contains it (`contains` sets of those terms), ranked 0 when a `whole` set of the term
 * equal to it holds them, 1 when a `first` set of a term starting with it does, else 2; within a rank in ord order.
 * For a phrase of two such words, search-carriers-by-phrase.sql's, the same way from the pairs (matchPair). For any
 * other phrase (three runs or more, a run of digits, a trailing separator), the carriers meeting every condition a
 * name containing it meets (its runs' words and pairs, its numbers, the state) are candidates, and each candidate's
 * names are read and checked as search-carriers-page.sql checks them (checkedPage), when there are few enough.
 */

import { stateKeyOf } from './search-store-keys.ts';

export const CARRIER_NAME_SETS = 'carrier_name_sets';

export const NAME_SETS_HEADER_KEY = 0;
/** Ords per DOT block (16 KB of DOTs): a page of 100 reads one or two. */
export const NAME_SETS_DOT_BLOCK = 4096;
const DOT_BASE = 1024;
const TERM_BASE = 1 << 16;
/** Sets per term: contains, first, whole. */
export const TERM_SET_KINDS = { contains: 0, first: 1, whole: 2 } as const;
export type TermSetKind = keyof typeof TERM_SET_KINDS;

/** The key of a state's set: its state key (search-store-keys.ts stateKeyOf, 1..676), below the DOT blocks. */
export function stateSetKey(stateKey: number): number {
  return stateKey;
}
export function dotBlockKey(block: number): number {
  return DOT_BASE + block;
}
export function termSetKey(term: number, kind: TermSetKind): number {
  return TERM_BASE + term * 3 + TERM_SET_KINDS[kind];
}
/**
 * The key of term `term`'s pair list (every pair starting with it: a term, a separator run, the next run when it
 * has a letter), after every term's sets.
 */
export function pairListKey(header: { terms: readonly string[] }, term: number): number {
  return TERM_BASE + header.terms.length * 3 + term;
}
/** The key of pair `pair`'s set of `kind`, after the pair lists. */
export function pairSetKey(header: { terms: readonly string[] }, pair: number, kind: TermSetKind): number {
  return TERM_BASE + header.terms.length * 4 + pair * 3 + TERM_SET_KINDS[kind];
}
/** Entries per block of the digit runs (a block is decoded on first use: small, so a first use costs little). */
export const NAME_SETS_DIGIT_BLOCK = 512;
/** The key of block `block` of the digit runs (every run of digits alone of every name, with its carrier), after the pairs' sets. */
export function digitsBlockKey(header: { terms: readonly string[]; pair_count?: number }, block: number): number {
  return TERM_BASE + header.terms.length * 4 + (header.pair_count ?? 0) * 3 + block;
}
/** Whether every key of a store over `carriers`, `terms`, `pairs` and `digitBlocks` fits an INTEGER and the DOT blocks below the terms. */
export function nameSetKeysFit(carriers: number, terms: number, pairs: number, digitBlocks = 0): boolean {
  return (
    DOT_BASE + Math.ceil(carriers / NAME_SETS_DOT_BLOCK) <= TERM_BASE && TERM_BASE + terms * 4 + pairs * 3 + digitBlocks <= 2 ** 31 - 1
  );
}

/** A set of ords: sorted distinct ords, or a bitmap of `ceil(n / 32)` words (bit o of word o >>> 5). */
export type OrdSet = { count: number; list: Uint32Array; bits?: undefined } | { count: number; bits: Uint32Array; list?: undefined };

/** The bytes of a typed array as base64 (the platform's byte order: this store is written and read little-endian). */
function base64Of(a: Uint32Array | Int32Array): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
}
/** A Uint32Array (aligned, its own buffer) from base64 text starting at `from`. */
function wordsOf(text: string, from: number): Uint32Array {
  const bytes = Buffer.from(text.slice(from), 'base64');
  const out = new Uint32Array(bytes.length >>> 2);
  new Uint8Array(out.buffer).set(bytes.subarray(0, out.length * 4));
  return out;
}

/** The record text of a set of `ords` (sorted, distinct) among `n` carriers, or null for an empty set. */
export function encodeOrdSet(ords: Uint32Array, n: number): string | null {
  if (ords.length === 0) return null;
  const words = (n + 31) >>> 5;
  if (ords.length <= words) return `L${ords.length}:${base64Of(ords)}`;
  const bits = new Uint32Array(words);
  for (let i = 0; i < ords.length; i++) {
    const o = ords[i]!;
    bits[o >>> 5]! |= 1 << (o & 31);
  }
  return `B${ords.length}:${base64Of(bits)}`;
}
/**
 * The record text of the set of `count` ords marked in `bits` (a bitmap of `ceil(n / 32)` words), or null when empty:
 * the same text encodeOrdSet gives for those ords in order (a list when it is no longer than the bitmap, else the
 * bitmap itself), for a set built by marking bits instead of sorting its ords.
 */
export function encodeOrdBits(bits: Uint32Array, count: number, n: number): string | null {
  if (count === 0) return null;
  const words = (n + 31) >>> 5;
  if (count > words) return `B${count}:${base64Of(bits.subarray(0, words))}`;
  const ords: number[] = [];
  collectBits(bits.subarray(0, words), null, 0, count, ords);
  return `L${count}:${base64Of(Uint32Array.from(ords))}`;
}
export function decodeOrdSet(text: string): OrdSet {
  const colon = text.indexOf(':');
  const count = Number(text.slice(1, colon));
  if (text[0] === 'L') return { count, list: wordsOf(text, colon + 1) };
  if (text[0] === 'B') return { count, bits: wordsOf(text, colon + 1) };
  throw new Error(`carrier_name_sets: not a set record (${text.slice(0, 16)})`);
}
export function encodeDotBlock(dots: Int32Array): string {
  return base64Of(dots);
}
export function decodeDotBlock(text: string): Int32Array {
  const w = wordsOf(text, 0);
  return new Int32Array(w.buffer, 0, w.length);
}

export interface NameSetsHeader {
  n: number;
  terms: string[];
  /** Whether the store has the pairs of adjacent words (pairListKey, pairSetKey). */
  pairs?: boolean;
  /** Number of pairs, and the first run of each block of the digit runs (digitsBlockKey), when the store has them. */
  pair_count?: number;
  digit_firsts?: string[];
}

/** A term's pairs: [separator, second term's index, pair number], as pairListKey's record holds them. */
export type PairList = Array<[string, number, number]>;

/** A block of the digit runs: the runs ascending, and each one's ord (ascending within a run). */
export interface DigitBlock {
  runs: string[];
  ords: number[];
}

/** What the search reads: the header, and sets, DOT blocks, pair lists and digit blocks by key (null: no record), decoded. */
export interface NameSetsSource {
  header: NameSetsHeader;
  set(key: number): OrdSet | null;
  dots(block: number): Int32Array | null;
  pairs(term: number): PairList | null;
  digits(block: number): DigitBlock | null;
}

/**
 * A carrier's legal and DBA names as served (not lower-cased), by DOT; null when the carrier cannot be read. The
 * search of a longer phrase checks its candidates' names with it.
 */
export type NamesOf = (dot: number) => readonly [string | null, string | null] | null;

/** The carriers of a 2-letter state (null: no carrier there, or not a state of 2 letters A-Z). */
function stateSet(src: NameSetsSource, state: string): OrdSet | null {
  return /^[A-Z]{2}$/.test(state) ? src.set(stateSetKey(stateKeyOf(state))) : null;
}

function pop32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
function popcount(bits: Uint32Array): number {
  let c = 0;
  for (let w = 0; w < bits.length; w++) {
    const x = bits[w]!;
    if (x !== 0) c += pop32(x);
  }
  return c;
}

/** `into` |= `s` (a bitmap of as many words). */
function orInto(into: Uint32Array, s: OrdSet): void {
  if (s.bits) {
    const b = s.bits;
    for (let w = 0; w < b.length; w++) into[w]! |= b[w]!;
  } else {
    const l = s.list;
    for (let i = 0; i < l.length; i++) {
      const o = l[i]!;
      into[o >>> 5]! |= 1 << (o & 31);
    }
  }
}
function andInto(into: Uint32Array, mask: Uint32Array): void {
  for (let w = 0; w < into.length; w++) into[w]! &= mask[w]!;
}

/**
 * The union of `sets`, masked by `mask`: a single set without a mask as it is (a list stays a list, its count
 * stored); otherwise a bitmap built in `into`, counted. Null for no set.
 */
function unionOf(sets: readonly OrdSet[], into: Uint32Array, mask: Uint32Array | null): OrdSet | null {
  if (sets.length === 0) return null;
  const one = sets.length === 1 ? sets[0]! : null;
  if (one && !mask) return one;
  if (one?.bits) into.set(one.bits);
  else {
    into.fill(0);
    for (const s of sets) orInto(into, s);
  }
  if (mask) andInto(into, mask);
  return { bits: into, count: popcount(into) };
}

/**
 * Appends to `out` the ords at positions skip .. skip + take - 1 (in ord order) of the bitmap `a & ~b` (b null: `a`);
 * returns how many were appended.
 */
function collectBits(a: Uint32Array, b: Uint32Array | null, skip: number, take: number, out: number[]): number {
  let seen = 0;
  let got = 0;
  for (let w = 0; w < a.length && got < take; w++) {
    let x = b ? a[w]! & ~b[w]! : a[w]!;
    if (x === 0) continue;
    const c = pop32(x);
    if (seen + c <= skip) {
      seen += c;
      continue;
    }
    while (x !== 0 && got < take) {
      const low = x & -x;
      if (seen >= skip) {
        out.push((w << 5) + 31 - Math.clz32(low));
        got++;
      }
      seen++;
      x ^= low;
    }
  }
  return got;
}
/**
 * Appends to `out` the ords at positions skip .. skip + take - 1 (in ord order) of `a` minus `b` (b null: `a`);
 * returns how many were appended. Two bitmaps go word by word (popcounts skip whole words); a list is walked with a
 * pointer into a listed `b`, or a bit test of a bitmap `b`.
 */
function collectDiff(a: OrdSet, b: OrdSet | null, skip: number, take: number, out: number[]): number {
  if (a.bits && (!b || b.bits)) return collectBits(a.bits, b?.bits ?? null, skip, take, out);
  if (!b && a.list) {
    const end = Math.min(a.list.length, skip + take);
    for (let i = skip; i < end; i++) out.push(a.list[i]!);
    return Math.max(0, end - skip);
  }
  let seen = 0;
  let got = 0;
  let j = 0;
  const bl = b?.list;
  const bb = b?.bits;
  /** Whether `o` (ascending from call to call) is in b. */
  const inB = (o: number): boolean => {
    if (bb) return ((bb[o >>> 5]! >>> (o & 31)) & 1) === 1;
    if (!bl) return false;
    while (j < bl.length && bl[j]! < o) j++;
    return j < bl.length && bl[j] === o;
  };
  if (a.list) {
    const l = a.list;
    for (let i = 0; i < l.length && got < take; i++) {
      const o = l[i]!;
      if (inB(o)) continue;
      if (seen++ >= skip) {
        out.push(o);
        got++;
      }
    }
    return got;
  }
  const bits = a.bits!;
  for (let w = 0; w < bits.length && got < take; w++) {
    let x = bits[w]!;
    while (x !== 0 && got < take) {
      const low = x & -x;
      x ^= low;
      const o = (w << 5) + 31 - Math.clz32(low);
      if (inB(o)) continue;
      if (seen++ >= skip) {
        out.push(o);
        got++;
      }
    }
  }
  return got;
}

/** Scratch bitmaps of one search (the search is synchronous: one set per source serves every request in turn). */
export class NameSetsScratch {
  readonly u: Uint32Array;
  readonly first: Uint32Array;
  readonly whole: Uint32Array;
  readonly state: Uint32Array;
  constructor(n: number) {
    const words = (n + 31) >>> 5;
    this.u = new Uint32Array(words);
    this.first = new Uint32Array(words);
    this.whole = new Uint32Array(words);
    this.state = new Uint32Array(words);
  }
}

/** The dictionary terms containing `q`, by index, from the terms joined by '\n' (one indexOf pass instead of a call per term). */
export class TermFinder {
  private readonly text: string;
  private readonly starts: Uint32Array;
  constructor(readonly terms: readonly string[]) {
    this.text = terms.join('\n');
    this.starts = new Uint32Array(terms.length);
    let at = 0;
    terms.forEach((t, i) => {
      this.starts[i] = at;
      at += t.length + 1;
    });
  }
  /** Indexes of the terms containing `q` (q has no '\n'), ascending. */
  containing(q: string): number[] {
    const out: number[] = [];
    let from = 0;
    for (;;) {
      const at = this.text.indexOf(q, from);
      if (at < 0) return out;
      // The term holding position `at`: the last start ≤ at.
      let lo = 0;
      let hi = this.starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (this.starts[mid]! <= at) lo = mid;
        else hi = mid - 1;
      }
      const end = this.starts[lo]! + this.terms[lo]!.length;
      if (at + q.length <= end) out.push(lo);
      // Next: past this term (one hit per term).
      from = end + 1;
    }
  }
}

/** The sets a query's matches are read from: every match (contains), its rank-1 matches (firsts), its rank-0 ones (whole). */
interface Matched {
  contains: OrdSet[];
  firsts: OrdSet[];
  whole: OrdSet | null;
}

/** A word's sets: the terms containing it, of which those starting with it (first) and the one equal to it (whole). */
function matchWord(src: NameSetsSource, finder: TermFinder, q: string): Matched {
  const terms = finder.terms;
  const m: Matched = { contains: [], firsts: [], whole: null };
  for (const i of finder.containing(q)) {
    const c = src.set(termSetKey(i, 'contains'));
    if (c) m.contains.push(c);
    if (terms[i]!.startsWith(q)) {
      const f = src.set(termSetKey(i, 'first'));
      if (f) m.firsts.push(f);
      if (terms[i] === q) m.whole = src.set(termSetKey(i, 'whole'));
    }
  }
  return m;
}

/** A phrase of two words the pairs answer: a run with a letter, a separator run, a run with a letter. */
export const PAIR_PHRASE = /^([a-z0-9]*[a-z][a-z0-9]*)([^a-z0-9]+)([a-z0-9]*[a-z][a-z0-9]*)$/;

/** The indexes of the terms starting with `q`: a range of the sorted dictionary (empty when lo > hi). */
function prefixRange(terms: readonly string[], q: string): [number, number] {
  let lo = 0;
  let hi = terms.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (terms[mid]! < q) lo = mid + 1;
    else hi = mid;
  }
  let end = lo;
  while (end < terms.length && terms[end]!.startsWith(q)) end++;
  return [lo, end - 1];
}

/**
 * A two-word phrase's sets (w1, separator s, w2: PAIR_PHRASE): a name contains it exactly when two adjacent runs of
 * it (a pair) are a term ending with w1, the separator s, and a term starting with w2 (w1 ends its run and w2 starts
 * the next, since s is a whole separator run between letters or digits). It starts with it when the pair is the
 * name's first and its first term is w1 (first sets), and is it when, besides, the pair is the whole name and its
 * second term is w2 (whole sets).
 */
function matchPair(src: NameSetsSource, finder: TermFinder, w1: string, sep: string, w2: string): Matched {
  const terms = finder.terms;
  const m: Matched = { contains: [], firsts: [], whole: null };
  const [lo, hi] = prefixRange(terms, w2);
  if (lo > hi) return m;
  for (const a of finder.containing(w1)) {
    if (!terms[a]!.endsWith(w1)) continue;
    const pairs = src.pairs(a);
    if (!pairs) continue;
    for (const [s, b, pi] of pairs) {
      if (s !== sep || b < lo || b > hi) continue;
      const c = src.set(pairSetKey(src.header, pi, 'contains'));
      if (c) m.contains.push(c);
      if (terms[a] !== w1) continue;
      const f = src.set(pairSetKey(src.header, pi, 'first'));
      if (f) m.firsts.push(f);
      if (terms[b] === w2) m.whole = src.set(pairSetKey(src.header, pi, 'whole'));
    }
  }
  return m;
}

/**
 * The ords and total of a name search's page from the sets: search-carriers-by-term.sql's answer for `q`, a
 * lower-case word of [a-z0-9] with a letter, or search-carriers-by-phrase.sql's for a phrase of two such words
 * (PAIR_PHRASE), in `state` or any: rank 0 (whole name), then 1 (name prefix), then 2, each in ord order. Any other
 * name, given `namesOf`, is answered by checkedPage. Null when the sets do not answer `q` (a store without pairs, no
 * `namesOf`, or checkedPage declining). An empty page reports total 0, as the SQL's window count does.
 */
export function nameSetsPage(
  src: NameSetsSource,
  finder: TermFinder,
  scratch: NameSetsScratch,
  q: string,
  state: string | null,
  limit: number,
  offset: number,
  namesOf: NamesOf | null = null,
): { ords: number[]; total: number } | null {
  const none = { ords: [], total: 0 };
  let matched: Matched;
  if (/^[a-z0-9]*[a-z][a-z0-9]*$/.test(q)) matched = matchWord(src, finder, q);
  else {
    const p = PAIR_PHRASE.exec(q);
    if (!p || src.header.pairs !== true) return namesOf ? checkedPage(src, finder, q, state, limit, offset, namesOf) : null;
    matched = matchPair(src, finder, p[1]!, p[2]!, p[3]!);
  }
  const { contains, firsts, whole } = matched;
  if (contains.length === 0) return none;
  let mask: Uint32Array | null = null;
  if (state !== null) {
    const s = stateSet(src, state);
    if (!s) return none;
    mask = scratch.state;
    mask.fill(0);
    orInto(mask, s);
  }
  // Ranks nest (whole ⊆ first ⊆ contains: a whole name is its first term, which contains q), so the page walks
  // whole, then first minus whole, then contains minus first. A single set without a state is used as it is (its
  // count stored), so a query of one term or pair costs no pass over a bitmap beyond the page's words.
  const out: number[] = [];
  const u = unionOf(contains, scratch.u, mask)!;
  const total = u.count;
  const f = unionOf(firsts, scratch.first, mask);
  const wh = f && whole ? unionOf([whole], scratch.whole, mask) : null;
  const nFirst = f?.count ?? 0;
  const nWhole = wh?.count ?? 0;
  let skip = offset;
  let take = Math.min(limit, Math.max(0, total - offset));
  const segment = (a: OrdSet | null, b: OrdSet | null, size: number) => {
    if (take === 0) return;
    if (skip >= size) {
      skip -= size;
      return;
    }
    if (!a) return;
    take -= collectDiff(a, b, skip, take, out);
    skip = 0;
  };
  segment(wh, null, nWhole);
  segment(f, wh, nFirst - nWhole);
  segment(u, f, total - nFirst);
  if (out.length === 0) return none;
  return { ords: out, total };
}

/** The DOTs of `ords` (from the DOT blocks); null when a block is missing. */
export function dotsOfOrds(src: NameSetsSource, ords: readonly number[]): number[] | null {
  const dots: number[] = [];
  let blockNo = -1;
  let block: Int32Array | null = null;
  for (const o of ords) {
    const b = Math.floor(o / NAME_SETS_DOT_BLOCK);
    if (b !== blockNo) {
      block = src.dots(b);
      blockNo = b;
    }
    if (!block) return null;
    const d = block[o - b * NAME_SETS_DOT_BLOCK];
    if (d === undefined) return null;
    dots.push(d);
  }
  return dots;
}

/** Most carriers a longer phrase's narrowest condition may hold for its candidates to be walked (else the SQL answers). */
export const PHRASE_WALK_CAP = 200_000;
/** Most candidates whose names a longer phrase's search reads and checks (else the SQL answers). */
export const PHRASE_CHECK_CAP = 2_000;
/** Most words one condition of a longer phrase reads the sets of (a condition of more is left out: it only narrows). */
const CONDITION_TERMS_CAP = 256;
/** Most digit-run blocks one condition reads: a shorter prefix of digits narrows too little to be worth more. */
const DIGIT_BLOCKS_CAP = 32;

/** A condition every name containing the phrase meets: a union of sets (and of listed ords), with its size bound. */
interface Condition {
  sets: OrdSet[];
  size: number;
}
function condition(sets: OrdSet[]): Condition {
  let size = 0;
  for (const x of sets) size += x.count;
  return { sets, size };
}
function inSet(s: OrdSet, o: number): boolean {
  if (s.bits) return ((s.bits[o >>> 5]! >>> (o & 31)) & 1) === 1;
  const l = s.list;
  let lo = 0;
  let hi = l.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = l[mid]!;
    if (v < o) lo = mid + 1;
    else if (v > o) hi = mid - 1;
    else return true;
  }
  return false;
}
const meets = (c: Condition, o: number) => c.sets.some((x) => inSet(x, o));

/**
 * The carriers having a run of digits alone equal to `digits` (or starting with it, `prefix`), as a listed set; null
 * when the store has no digit runs or the runs span more than DIGIT_BLOCKS_CAP blocks (too common to narrow).
 */
function digitRunSet(src: NameSetsSource, digits: string, prefix: boolean): OrdSet | null {
  const firsts = src.header.digit_firsts;
  if (!firsts) return null;
  // The last block whose first run is below `digits` may hold it; runs equal to or starting with it follow.
  let lo = 0;
  let hi = firsts.length - 1;
  let b = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (firsts[mid]! < digits) {
      b = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const ords: number[] = [];
  for (let read = 0; b < firsts.length; b++, read++) {
    if (read === DIGIT_BLOCKS_CAP) return null;
    const block = src.digits(b);
    if (!block) return null;
    let past = false;
    for (let i = 0; i < block.runs.length; i++) {
      const r = block.runs[i]!;
      if (r < digits) continue;
      if (prefix ? !r.startsWith(digits) : r !== digits) {
        past = true;
        break;
      }
      ords.push(block.ords[i]!);
    }
    if (past) break;
  }
  ords.sort((x, y) => x - y);
  const list = Uint32Array.from(ords.filter((o, i) => i === 0 || o !== ords[i - 1]));
  return { count: list.length, list };
}

/** The contains sets of the terms at `indexes`. */
function containsSets(src: NameSetsSource, indexes: Iterable<number>): OrdSet[] {
  const out: OrdSet[] = [];
  for (const i of indexes) {
    const c = src.set(termSetKey(i, 'contains'));
    if (c) out.push(c);
  }
  return out;
}

/**
 * The conditions a name containing the phrase `runs`/`seps` meets, one per run (its first run ends a run of the
 * name, a middle run is one, its last run starts one; with a trailing separator the last run is one too) and one per
 * two adjacent runs with letters (a pair); null when a condition cannot be had (a store without pairs or digit runs,
 * or a run of digits too common to narrow: then it is left out). An empty condition means no name contains it.
 */
function phraseConditions(src: NameSetsSource, finder: TermFinder, runs: string[], seps: string[], trailing: boolean): Condition[] {
  const terms = finder.terms;
  const k = runs.length;
  const letter = (r: string) => /[a-z]/.test(r);
  /**
   * How run j must sit in a name's run: 'inside' (the phrase is that one run), 'end' (its first run, followed by a
   * separator), 'start' (its last run, open), else 'whole'.
   */
  const part = (j: number): 'inside' | 'end' | 'start' | 'whole' =>
    k === 1 && !trailing ? 'inside' : j === 0 ? 'end' : j === k - 1 && !trailing ? 'start' : 'whole';
  /** Indexes of the terms a run j may be. */
  const termsOf = (j: number): number[] => {
    const r = runs[j]!;
    const how = part(j);
    if (how === 'start') {
      const [lo, hi] = prefixRange(terms, r);
      return Array.from({ length: Math.max(0, hi - lo + 1) }, (_, i) => lo + i);
    }
    if (how === 'whole') {
      const [lo] = prefixRange(terms, r);
      return terms[lo] === r ? [lo] : [];
    }
    const inside = finder.containing(r);
    return how === 'inside' ? inside : inside.filter((i) => terms[i]!.endsWith(r));
  };
  const out: Condition[] = [];
  for (let j = 0; j < k; j++) {
    const r = runs[j]!;
    const how = part(j);
    if (letter(r)) {
      // A run many words may be (`e` ends most of them) narrows little for what reading their sets costs: left out.
      const ts = termsOf(j);
      if (ts.length <= CONDITION_TERMS_CAP) out.push(condition(containsSets(src, ts)));
    } else if (how === 'start' || how === 'whole') {
      // A run of digits alone: the digit runs equal to it (or starting with it), and, when open, the terms starting with it.
      const d = digitRunSet(src, r, how === 'start');
      if (d) out.push(condition([...(d.count ? [d] : []), ...(how === 'start' ? containsSets(src, termsOf(j)) : [])]));
    }
  }
  if (src.header.pairs === true)
    for (let j = 0; j + 1 < k; j++) {
      if (!letter(runs[j]!) || !letter(runs[j + 1]!)) continue;
      const as = termsOf(j);
      if (as.length > CONDITION_TERMS_CAP) continue;
      const bs = new Set(termsOf(j + 1));
      const sets: OrdSet[] = [];
      for (const a of as)
        for (const [sep, b, pi] of src.pairs(a) ?? [])
          if (sep === seps[j] && bs.has(b)) {
            const c = src.set(pairSetKey(src.header, pi, 'contains'));
            if (c) sets.push(c);
          }
      out.push(condition(sets));
    }
  return out;
}

/**
 * The page of a phrase the pairs alone do not answer (three runs or more, a run of digits, a trailing separator): the
 * carriers meeting every condition of phraseConditions are the candidates, and each candidate's names are read
 * (`namesOf`) and checked as search-carriers-page.sql checks them: contained in the lower-cased legal or DBA name,
 * rank 0 when equal to one, 1 when one starts with it. Null (the SQL answers) when the narrowest condition holds
 * more than PHRASE_WALK_CAP carriers, more than PHRASE_CHECK_CAP candidates remain, the phrase starts with a
 * separator, or a candidate's name is not ASCII (JS and DuckDB lower-case alike only there) or cannot be read.
 */
function checkedPage(
  src: NameSetsSource,
  finder: TermFinder,
  q: string,
  state: string | null,
  limit: number,
  offset: number,
  namesOf: NamesOf,
): { ords: number[]; total: number } | null {
  const tokens = q.match(/[a-z0-9]+|[^a-z0-9]+/g) ?? [];
  if (tokens.length === 0 || !/^[a-z0-9]/.test(tokens[0]!)) return null;
  const trailing = tokens.length % 2 === 0;
  const runs = tokens.filter((_, i) => i % 2 === 0);
  const seps = tokens.filter((_, i) => i % 2 === 1);
  const conditions = phraseConditions(src, finder, runs, seps, trailing);
  if (state !== null) {
    const s = stateSet(src, state);
    conditions.push(condition(s ? [s] : []));
  }
  if (conditions.length === 0) return null;
  conditions.sort((a, b) => a.size - b.size);
  const [narrowest, ...rest] = conditions;
  if (narrowest!.size === 0) return { ords: [], total: 0 };
  if (narrowest!.size > PHRASE_WALK_CAP) return null;
  // The candidates: the narrowest condition's carriers (each once) that meet every other.
  const seen = narrowest!.sets.length > 1 ? new Set<number>() : null;
  const candidates: number[] = [];
  for (const x of narrowest!.sets) {
    const visit = (o: number) => {
      if (seen) {
        if (seen.has(o)) return;
        seen.add(o);
      }
      if (rest.every((c) => meets(c, o))) candidates.push(o);
    };
    if (x.list) for (let i = 0; i < x.list.length; i++) visit(x.list[i]!);
    else for (let w = 0; w < x.bits.length; w++) for (let y = x.bits[w]!; y !== 0; y &= y - 1) visit((w << 5) + 31 - Math.clz32(y & -y));
    if (candidates.length > PHRASE_CHECK_CAP) return null;
  }
  candidates.sort((a, b) => a - b);
  const dots = dotsOfOrds(src, candidates);
  if (!dots) return null;
  const ranked: Array<[rank: number, ord: number]> = [];
  for (let i = 0; i < candidates.length; i++) {
    const names = namesOf(dots[i]!);
    if (!names) return null;
    let rank = 3;
    for (const name of names) {
      if (name == null) continue;
      // lower() of printable ASCII is the same in JS and DuckDB; anything else (where they may differ) the SQL answers.
      if (/[^ -~]/.test(name)) return null;
      const lc = name.toLowerCase();
      rank = Math.min(rank, lc === q ? 0 : lc.startsWith(q) ? 1 : lc.includes(q) ? 2 : 3);
    }
    if (rank < 3) ranked.push([rank, candidates[i]!]);
  }
  ranked.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const page = ranked.slice(offset, offset + limit).map((r) => r[1]);
  return page.length ? { ords: page, total: ranked.length } : { ords: [], total: 0 };
}
