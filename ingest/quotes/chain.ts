/**
 * The daily origin chain of quotes, as a pure fold.
 *
 * Each bar has a record (`quoteRecord`: the bar's own fields, numbers in their
 * shortest form) and a leaf of kind `quote_day`:
 *
 *   {kind: "quote_day", source, source_url, retrieved_at, content_sha256 (of the file the bar came from),
 *    record_sha256 (of the record), parent}
 *
 * `parent` is the leaf of the previous trading day of the same ticker and
 * adjustment; the first day's parent is the leaf of the source file it was read
 * from. The fold visits the bars of one chain in date order and carries the
 * head, so the same bytes always give the same hashes.
 *
 * Forks: when a key (ticker, date, adjustment) has several distinct versions
 * (a corrected bar in a later file), every version gets a leaf with the SAME
 * parent (siblings); only the current (last) version continues the chain, the
 * others are kept as superseded leaves (table quote_leaf_history). A
 * correction therefore re-hashes every later day of that chain: the old
 * leaves stay verifiable from the history table, the new ones from quote_bars.
 *
 * Speed: the leaf text is assembled from a per-source prefix and suffix (the
 * RFC 8785 serialisation of a string/null-only object is plain concatenation
 * with JSON string escaping), equal byte for byte to `createLeaf` (pinned in
 * test/quotes/chain.test.ts), and hashed with one-shot `crypto.hash`.
 */
import { hashCanonical, sha256Hex } from '../../lib/hash.ts';
import { createLeaf, createSourceLeaf, LEAF_ALG, LEAF_CANON, type OriginLeaf, type SourceRef } from '../../lib/origin.ts';
import type { QuoteBar } from './quote.schema.ts';

export const QUOTE_LEAF_KIND = 'quote_day';

/** The record hashed into `record_sha256`: the bar's fields only (no flags, no provenance). */
export function quoteRecord(bar: QuoteBar): Record<string, string | number | null> {
  return {
    ticker: bar.ticker,
    quote_date: bar.quote_date,
    adjustment: bar.adjustment,
    open: bar.open,
    high: bar.high,
    low: bar.low,
    close: bar.close,
    volume: bar.volume,
    vwap: bar.vwap,
    trade_count: bar.trade_count,
  };
}

/** Where a chain's bars came from: the source file's identity (its leaf is the first day's parent). */
export type QuoteSource = Pick<SourceRef, 'source' | 'source_url' | 'retrieved_at' | 'content_sha256'>;

/** Pre-serialised pieces of the leaves of one source (see module comment). */
export interface LeafTemplate {
  prefix: string;
  suffix: string;
  /** Leaf hash of the source file itself (parent of a chain's first day). */
  source_leaf_hash: string;
}

export function leafTemplate(src: QuoteSource, withSourceLeaf = true): LeafTemplate {
  const j = JSON.stringify;
  return {
    prefix: `{"alg":"sha256","canon":"rfc8785","content_sha256":${j(src.content_sha256)},"kind":"${QUOTE_LEAF_KIND}","parent":`,
    suffix: `,"retrieved_at":${src.retrieved_at === null ? 'null' : j(src.retrieved_at)},"source":${j(src.source)},"source_url":${src.source_url === null ? 'null' : j(src.source_url)}}`,
    // `withSourceLeaf` false: the pieces only (quoteLeaf), without hashing the source file's own leaf.
    source_leaf_hash: withSourceLeaf ? createSourceLeaf({ ...src, byte_size: 0 }).leaf_hash : '',
  };
}

/** Leaf hash of one quote day from its template, parent and record hash. */
export function quoteLeafHash(t: Pick<LeafTemplate, 'prefix' | 'suffix'>, parent: string, recordSha256: string): string {
  return sha256Hex(`${t.prefix}"${parent}","record_sha256":"${recordSha256}"${t.suffix}`);
}

/** A template's leaf text as bytes, with the offsets of its two variable hashes (foldChainLeaves). */
interface LeafBytes {
  buf: Buffer;
  parentAt: number;
  recordAt: number;
}
const leafBytes = new WeakMap<LeafTemplate, LeafBytes>();

/** A template's leaf text as UTF-8 bytes with room for the parent and record hashes (see LeafBytes). */
function leafBytesOf(t: Pick<LeafTemplate, 'prefix' | 'suffix'>): LeafBytes {
  const head = Buffer.from(`${t.prefix}"`, 'utf8');
  const mid = Buffer.from('","record_sha256":"', 'utf8');
  const tail = Buffer.from(`"${t.suffix}`, 'utf8');
  const buf = Buffer.concat([head, Buffer.alloc(64), mid, Buffer.alloc(64), tail]);
  return { buf, parentAt: head.length, recordAt: head.length + 64 + mid.length };
}

/**
 * The leaf hashes of one chain of one source with one version per day, in date order, from its days' record JSON
 * texts (RECORD_JSON_SQL): day 0's parent is the source leaf, each next day's the previous leaf. Returns the leaves'
 * hex concatenated (64 characters per day). The same hashes as `quoteLeafHash` day by day (pinned in
 * test/quotes/chain.test.ts), with the leaf text kept as UTF-8 bytes in one buffer per template where only the parent
 * and record hashes are overwritten: no text is built or encoded per day (about a quarter of the per-file fold's JS).
 */
export function foldChainLeaves(t: LeafTemplate, records: readonly string[]): string {
  const { buf, parentAt, recordAt } = templateLeafBytes(t);
  const out = Buffer.allocUnsafe(records.length * 64);
  let parent = t.source_leaf_hash;
  for (let k = 0; k < records.length; k++) {
    buf.write(parent, parentAt, 64, 'latin1');
    buf.write(sha256Hex(records[k]!), recordAt, 64, 'latin1');
    parent = sha256Hex(buf);
    out.write(parent, k * 64, 64, 'latin1');
  }
  return out.toString('latin1');
}

/**
 * `foldChainLeaves` of the record texts held as UTF-8 bytes, joined by `\n` (newline, byte 10; a text holds none) and
 * in date order, as the per-file fold receives them from DuckDB (`encode(string_agg(text, '\n'))`): each record hash
 * is SHA-256 of the same bytes the text would be encoded to, so the leaves are `foldChainLeaves(t, texts)`'s (pinned in
 * test/quotes/chain.test.ts). No JS string is made per record, and none for the whole chain (DuckDB's text would be
 * decoded from UTF-8 and split first): about 0.07 s of the JS thread less per 504,000-bar file (issue 22 item 3).
 * `days` is the number of texts (the number of newlines plus one).
 */
export function foldChainLeavesBytes(t: LeafTemplate, records: Uint8Array, days: number): string {
  const { buf, parentAt, recordAt } = templateLeafBytes(t);
  const bytes = Buffer.from(records.buffer, records.byteOffset, records.byteLength);
  // The day's leaves as their hex strings, joined once at the end (no output buffer written per day).
  const leaves = new Array<string>(days);
  let parent = t.source_leaf_hash;
  let from = 0;
  for (let k = 0; k < days; k++) {
    const end = k === days - 1 ? bytes.length : bytes.indexOf(10, from);
    if (end < 0 || (k === days - 1 && bytes.indexOf(10, from) >= 0))
      throw new Error(`foldChainLeavesBytes: the texts are not ${days} lines`);
    buf.write(parent, parentAt, 64, 'latin1');
    buf.write(sha256Hex(bytes.subarray(from, end)), recordAt, 64, 'latin1');
    parent = sha256Hex(buf);
    leaves[k] = parent;
    from = end + 1;
  }
  return leaves.join('');
}

/** The template's leaf text as bytes with its two hash slots (made once per template; it needs its source leaf hash). */
function templateLeafBytes(t: LeafTemplate): LeafBytes {
  if (!HEX64.test(t.source_leaf_hash)) throw new Error('foldChainLeaves needs a template with its source leaf hash');
  let lb = leafBytes.get(t);
  if (!lb) leafBytes.set(t, (lb = leafBytesOf(t)));
  return lb;
}

/**
 * Printable ASCII without `"` and `\`: JSON.stringify of such a string (and RFC 8785's string form) is the string
 * between quotes, as it is. The fast serialisations below splice such values in; anything else takes the generic path.
 */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const HEX64 = /^[0-9a-f]{64}$/;
const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const plainOrNull = (x: unknown): x is string | null => x === null || (typeof x === 'string' && PLAIN.test(x));

/**
 * SHA-256 of the RFC 8785 JSON of `quoteRecord(bar)`. The text is written directly (keys in their sorted order,
 * numbers by ECMAScript ToString as RFC 8785 §3.2.2.3 and JSON.stringify write finite numbers, plain strings between
 * quotes, nulls as null: JSON.stringify of an object holding the members in that order), the same bytes as `hashCanonical(quoteRecord(bar))` (pinned in test/quotes/chain.test.ts); a bar with any
 * other value (a non-finite number, a string needing escapes) is hashed by the generic path, which also rejects it.
 */
export function quoteRecordSha256(bar: QuoteBar): string {
  const { ticker, quote_date, adjustment, open, high, low, close, volume, vwap, trade_count } = bar;
  if (
    typeof ticker === 'string' &&
    PLAIN.test(ticker) &&
    typeof quote_date === 'string' &&
    PLAIN.test(quote_date) &&
    typeof adjustment === 'string' &&
    PLAIN.test(adjustment) &&
    finite(open) &&
    finite(high) &&
    finite(low) &&
    finite(close) &&
    finite(volume) &&
    (vwap === null || finite(vwap)) &&
    (trade_count === null || finite(trade_count))
  )
    // JSON.stringify of the members in sorted key order writes that text as one flat string, its numbers formatted
    // without a string each (a template of ten values built a chain of partial strings and flattened it: ~1.1 KB
    // allocated a day against ~0.8, at the same CPU; a served history page rebuilds 30 days or more, issue 22).
    return sha256Hex(JSON.stringify({ adjustment, close, high, low, open, quote_date, ticker, trade_count, volume, vwap }));
  return hashCanonical(quoteRecord(bar));
}

/**
 * Leaf text bytes per source object (a served answer rebuilds many days of one or two sources), null for a source
 * with a value that is not plain (its leaves take `createLeaf`). Checked and built once per source object, which is
 * not changed afterwards (the service's sources are built once per answer).
 */
const sourceLeafBytes = new WeakMap<QuoteSource, LeafBytes | null>();
/**
 * The same bytes by the source's values, for a source object seen for the first time (each answer builds its own):
 * the ~1 KB of small buffers per answer came out of node's buffer pool, memory outside V8's heap that counts
 * towards its mark-compact trigger (issue 22). Bounded: cleared when full.
 */
const sourceLeafBytesByValue = new Map<string, LeafBytes>();
const SOURCE_LEAF_BYTES_MAX = 4096;

function sourceLeafBytesOf(src: QuoteSource): LeafBytes | null {
  let lb = sourceLeafBytes.get(src);
  if (lb === undefined) {
    const plain =
      typeof src.source === 'string' &&
      PLAIN.test(src.source) &&
      typeof src.content_sha256 === 'string' &&
      PLAIN.test(src.content_sha256) &&
      plainOrNull(src.source_url) &&
      plainOrNull(src.retrieved_at);
    lb = null;
    if (plain) {
      // Plain values hold no newline, so the joined key is unambiguous; null and a text differ by the marker.
      const key = `${src.source}\n${src.content_sha256}\n${src.source_url ?? '\u0000'}\n${src.retrieved_at ?? '\u0000'}`;
      lb = sourceLeafBytesByValue.get(key) ?? null;
      if (lb === null) {
        lb = leafBytesOf(leafTemplate(src, false));
        if (sourceLeafBytesByValue.size >= SOURCE_LEAF_BYTES_MAX) sourceLeafBytesByValue.clear();
        sourceLeafBytesByValue.set(key, lb);
      }
    }
    sourceLeafBytes.set(src, lb);
  }
  return lb;
}

/**
 * The full leaf object of one quote day (for responses and verification): `createLeaf`'s object, same members in
 * the same order. When every value is plain its hash is taken over the source's leaf text bytes with the parent and
 * record hashes written in (as `foldChainLeaves`; the text of `quoteLeafHash`, equal to `createLeaf`'s, pinned in
 * test/quotes/chain.test.ts): no leaf text is built per day (issue 22: a history page rebuilds 30 or more);
 * otherwise `createLeaf` itself.
 */
export function quoteLeaf(src: QuoteSource, parent: string, recordSha256: string): OriginLeaf {
  return leafOf(src, parent, recordSha256, typeof recordSha256 === 'string' && HEX64.test(recordSha256));
}

/**
 * `quoteLeaf(src, parent, quoteRecordSha256(bar))`: the leaf of a served day from its bar. The record hash is
 * quoteRecordSha256's own lower-case hex digest, so only the parent (a stored value) is checked for the fast path.
 */
export function quoteDayLeaf(src: QuoteSource, parent: string, bar: QuoteBar): OriginLeaf {
  return leafOf(src, parent, quoteRecordSha256(bar), true);
}

function leafOf(src: QuoteSource, parent: string, recordSha256: string, recordIsHex: boolean): OriginLeaf {
  const lb = recordIsHex && typeof parent === 'string' && HEX64.test(parent) ? sourceLeafBytesOf(src) : null;
  if (lb) {
    lb.buf.write(parent, lb.parentAt, 64, 'latin1');
    lb.buf.write(recordSha256, lb.recordAt, 64, 'latin1');
    // createLeaf's members in its order, written as one literal (no body object spread into the leaf per day).
    return {
      leaf_hash: sha256Hex(lb.buf),
      alg: LEAF_ALG,
      canon: LEAF_CANON,
      kind: QUOTE_LEAF_KIND,
      source: src.source,
      source_url: src.source_url,
      retrieved_at: src.retrieved_at,
      content_sha256: src.content_sha256,
      record_sha256: recordSha256,
      parent,
    };
  }
  return createLeaf({
    kind: QUOTE_LEAF_KIND,
    source: src.source,
    source_url: src.source_url,
    retrieved_at: src.retrieved_at,
    content_sha256: src.content_sha256,
    record_sha256: recordSha256,
    parent,
  });
}

/** One step of the fold: a version of one day's bar, in chain order. */
export interface FoldInput {
  /** True for the first version of the first day of a new chain (ticker+adjustment). */
  chain_start: boolean;
  /** True when this version starts a new day (key); false for a further version of the same day. */
  day_start: boolean;
  /** True for the version that continues the chain (the last version of its day). */
  current: boolean;
  template: LeafTemplate;
  record_sha256: string;
}

/**
 * The chain fold: feed versions in (ticker, adjustment, date, version) order;
 * returns each version's leaf hash and parent. State is the chain head and the
 * parent of the day being processed, so it streams over any number of rows.
 */
export class QuoteChainFold {
  private head: string | null = null;
  private dayParent: string | null = null;

  next(x: FoldInput): { leaf_hash: string; parent: string } {
    if (x.chain_start) this.head = x.template.source_leaf_hash;
    if (x.day_start || x.chain_start) this.dayParent = this.head;
    const parent = this.dayParent!;
    const leaf = quoteLeafHash(x.template, parent, x.record_sha256);
    if (x.current) this.head = leaf;
    return { leaf_hash: leaf, parent };
  }
}

/**
 * Pure chain of one ticker+adjustment: bars in any order (one version per
 * date), all from `src`. Returns leaves oldest first. Used by tests and by
 * verification; the pipeline runs the same fold over DuckDB chunks.
 */
export function chainBars(bars: readonly QuoteBar[], src: QuoteSource): Array<{ bar: QuoteBar; leaf: OriginLeaf }> {
  const sorted = [...bars].sort((a, b) => (a.quote_date < b.quote_date ? -1 : a.quote_date > b.quote_date ? 1 : 0));
  const t = leafTemplate(src);
  const fold = new QuoteChainFold();
  return sorted.map((bar, i) => {
    const rec = quoteRecordSha256(bar);
    const { parent } = fold.next({ chain_start: i === 0, day_start: true, current: true, template: t, record_sha256: rec });
    return { bar, leaf: quoteLeaf(src, parent, rec) };
  });
}

/** Kind and source of the leaf of a split_dividend bar re-derived from the raw bar and the splits after it. */
export const SPLIT_LEAF_KIND = 'quote_split_adjusted';
export const SPLIT_LEAF_SOURCE = 'proofline/quote-split-adjustment';

/** The record a split-adjusted bar's leaf hashes: the served bar's record, the split factor and the splits' leaves. */
export function splitAdjustedRecord(served: QuoteBar, splitFactor: number, splitLeafHashes: string[]): Record<string, unknown> {
  return { ...quoteRecord(served), split_factor: splitFactor, split_leaf_hashes: splitLeafHashes };
}

/**
 * The leaf of a split-adjusted bar (docs/quotes-and-transcripts.md, "Splits served"): names the (first) split's
 * reference file (`source_url`, `retrieved_at`, `content_sha256` of that split's leaf), commits to the record, and
 * chains to the raw bar's leaf (which names the raw file). The same function at publish (the hash stored in
 * quote_split_adjustments.served_leaf_hash) and at serving.
 */
export function splitAdjustedLeaf(
  record: Record<string, unknown>,
  firstSplit: Pick<OriginLeaf, 'source_url' | 'retrieved_at' | 'content_sha256'> | null,
  rawLeafHash: string,
): OriginLeaf {
  return createLeaf({
    kind: SPLIT_LEAF_KIND,
    source: SPLIT_LEAF_SOURCE,
    source_url: firstSplit?.source_url ?? null,
    retrieved_at: firstSplit?.retrieved_at ?? null,
    content_sha256: firstSplit?.content_sha256 ?? null,
    record_sha256: hashCanonical(record),
    parent: rawLeafHash,
  });
}
