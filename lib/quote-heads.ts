/**
 * The quotes domain's chain heads store (packed store `quote_heads`, written at publish by
 * jobs/quotes/derive-heads.sql): per ticker, its chains with their dates, day count, the one `quote_bars` file
 * holding each, the newest bar with its parent leaf hash and source, and the ticker's stale split-adjusted days.
 * Read by the quote routes (service/quotes) and the identity card's latest close (service/company), so that neither
 * reads `quote_bars` for what the store answers (issue 22). In lib/ because both families read it.
 *
 * A packed store is keyed by integers: key 0 holds the JSON array of every ticker, key i the (i-1)-th ticker's record.
 */
import type { SnapshotReader } from './warehouse/reader.ts';
import type { PackedStore } from './warehouse/packed-store.ts';

export const QUOTE_HEADS_STORE = 'quote_heads';

/** A bar as stored in a head (quote_bars' columns; prices as JSON numbers, dates YYYY-MM-DD). */
export interface QuoteHeadBar {
  ticker: string;
  adjustment: string;
  quote_date: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  vwap: number | null;
  trade_count: number | null;
  flags: string[] | null;
  dataset: string;
  content_sha256: string;
  day_index: number;
  leaf_hash: string;
}

export interface QuoteHeadChain {
  adjustment: string;
  first_date: string;
  last_date: string;
  days: number;
  /** Ordinal of the quote_bars file holding every bar of the chain (the table's files in order); null: several. */
  part: number | null;
  head: QuoteHeadBar;
  parent_leaf_hash: string | null;
  /** The bars before the head, newest first: 30, or fewer in a shorter chain (absent in a store written before it). */
  tail?: QuoteHeadBar[];
  /** The head's source file as service/quotes/quote-sources.sql picks it; null when `sources` has no row. */
  source: { source_url: string | null; retrieved_at: string | null; leaf_hash: string } | null;
}

export interface QuoteHeads {
  ticker: string;
  /** Newest last_date first, raw first on a tie (service/quotes/quote-chains.sql's order). */
  chains: QuoteHeadChain[];
  /** The ticker's stale split-adjusted days (quote_split_adjustments status 'stale'), null when none. */
  stale: { n: number; first: string; last: string } | null;
}

const directories = new WeakMap<PackedStore, Promise<Map<string, number>>>();

function directoryOf(store: PackedStore): Promise<Map<string, number>> {
  let d = directories.get(store);
  if (!d) {
    d = store.get(0).then((text) => new Map((JSON.parse(text ?? '[]') as string[]).map((t, i) => [t, i + 1])));
    d.catch(() => directories.delete(store));
    directories.set(store, d);
  }
  return d;
}

/**
 * How many tickers' parsed records `readQuoteHeads` keeps per served store. A record is about 13 KB of JSON (27 KB
 * with both series) and about as much heap once parsed (16.7 KB a record on average over 1,024 records of the
 * full-scale store): all 7,863 tickers of the full-scale store would hold about 130 MB, so the memo is bounded by a
 * count of tickers, about 17 MB at full scale, whatever the number of requests.
 */
export const QUOTE_HEADS_MEMO_TICKERS = 1024;
let memoLimit = QUOTE_HEADS_MEMO_TICKERS;

/** Per served heads store: each ticker's parsed record (deeply frozen), once read; at most `memoLimit` tickers. */
const headsMemo = new WeakMap<PackedStore, Map<string, QuoteHeads>>();

/** Sets how many tickers the memo keeps per store (tests lower it to see the bound); returns the previous limit. */
export function setQuoteHeadsMemoLimit(n: number): number {
  const prev = memoLimit;
  memoLimit = n;
  return prev;
}

/** How many tickers' records the memo holds for `store` (tests). */
export function quoteHeadsMemoSize(store: PackedStore): number {
  return headsMemo.get(store)?.size ?? 0;
}

/** `v` and everything in it frozen (a parsed JSON value: plain objects and arrays), for a record shared by answers. */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** Keeps `heads` for `ticker` in `store`'s memo; when full, the ticker kept longest goes first (insertion order). */
function remember(store: PackedStore, ticker: string, heads: QuoteHeads): void {
  if (memoLimit <= 0) return;
  let memo = headsMemo.get(store);
  if (!memo) headsMemo.set(store, (memo = new Map()));
  while (memo.size >= memoLimit && memo.size > 0) memo.delete(memo.keys().next().value!);
  memo.set(ticker, heads);
}

/**
 * What the served snapshot's heads store says of `ticker` (already normalised), with the absolute paths of
 * quote_bars' files of that same snapshot: `heads` null when the ticker has no bars. Null when the snapshot has no
 * heads store (published before it existed, or nothing published): the caller then reads quote_bars.
 *
 * A ticker's record is read and parsed once per store and kept (deeply frozen, shared by every answer that reads it:
 * callers copy what they change) for up to QUOTE_HEADS_MEMO_TICKERS tickers: a history page parsed its ticker's
 * record on every request (issue 22: 13 % of the page's CPU and a sixth of its allocation). A snapshot's store is
 * immutable and replaced as a whole on a swap, and the memo is kept per store object, so a new snapshot's answers
 * never see an older record. The quote routes still rebuild every leaf from the record's values and compare it with
 * the stored hash on every answer (`origin_verified`).
 */
export async function readQuoteHeads(
  quotes: SnapshotReader,
  ticker: string,
  retry = true,
): Promise<{ heads: QuoteHeads | null; barFiles: readonly string[] } | null> {
  // Store and file list from the same snapshot: both are read before any await (a swap replaces them together).
  const store = quotes.packed(QUOTE_HEADS_STORE);
  const barFiles = quotes.tableFiles('quote_bars');
  if (!store || !barFiles) return null;
  try {
    const kept = headsMemo.get(store)?.get(ticker);
    if (kept) return { heads: kept, barFiles };
    const key = (await directoryOf(store)).get(ticker);
    if (key === undefined) return { heads: null, barFiles };
    const text = await store.get(key);
    if (!text) return { heads: null, barFiles };
    const heads = deepFreeze(JSON.parse(text) as QuoteHeads);
    remember(store, ticker, heads);
    return { heads, barFiles };
  } catch (e) {
    // The reader swapped to a newer snapshot meanwhile and closed this one's store: read the new one once.
    if (retry && quotes.packed(QUOTE_HEADS_STORE) !== store) return readQuoteHeads(quotes, ticker, false);
    throw e;
  }
}

/** The newest raw bar's date and close of a ticker (the identity card's market-cap basis), null without a raw chain. */
export interface LatestRawClose {
  quote_date: string;
  close: number;
}

const latestRawCloses = new WeakMap<PackedStore, Map<string, LatestRawClose | null>>();

/**
 * The newest raw bar of `ticker` (normalised) as the identity card reads it from the heads store: `quote_date` and
 * `close` of the raw chain's head, null when the ticker has no raw chain. Undefined when the snapshot has no heads store
 * (the caller then reads quote_bars). Kept per store and ticker once read: a ticker's record (about 22 KB of JSON with
 * its chains' 30-bar tails at full scale) is parsed once per snapshot for these two values instead of on every card
 * (issue 22). Bounded by the store's tickers (8,200 at full scale, a few dozen bytes each); dropped with the store.
 */
export async function readLatestRawClose(quotes: SnapshotReader, ticker: string): Promise<LatestRawClose | null | undefined> {
  const store = quotes.packed(QUOTE_HEADS_STORE);
  if (!store) return undefined;
  let memo = latestRawCloses.get(store);
  const known = memo?.get(ticker);
  if (known !== undefined) return known;
  const found = await readQuoteHeads(quotes, ticker);
  if (!found) return undefined;
  const raw = found.heads?.chains.find((x) => x.adjustment === 'raw');
  const latest = raw ? { quote_date: raw.head.quote_date, close: Number(raw.head.close) } : null;
  // Kept only for a ticker of the store's directory (an unknown ticker costs no record read), and only when the
  // reader still serves the store it was read from (readQuoteHeads reads the newer one after a swap).
  if (found.heads !== null && quotes.packed(QUOTE_HEADS_STORE) === store) {
    if (!memo) latestRawCloses.set(store, (memo = new Map()));
    memo.set(ticker, latest);
  }
  return latest;
}
