/**
 * Quote queries, transport-free (HTTP routes, MCP tools and /api/verify call
 * these). Leaves are not stored as JSON: each is rebuilt from the bar's
 * columns, its source file (sources) and the previous day's stored leaf hash,
 * then compared with the stored hash, so a changed row is detected on read.
 */
import { withMembers } from '../../lib/objects.ts';
import { InvalidInputError, NotFoundError, PipelineError } from '../../lib/errors.ts';
import { createLeaf, verifyLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { isSha256Hex } from '../../lib/hash.ts';
import { loadSql, type Row } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import {
  leafTemplate,
  quoteDayLeaf,
  quoteLeaf,
  quoteLeafHash,
  quoteRecord,
  quoteRecordSha256,
  splitAdjustedLeaf,
  splitAdjustedRecord,
  type QuoteSource,
} from '../../ingest/quotes/chain.ts';
import { normalizeTicker, type Adjustment, type QuoteBar } from '../../ingest/quotes/quote.schema.ts';
import { findCompanyIdentity, findCompanyName, parseCompanyRef, pickSharesAsOf } from '../company/company.queries.ts';
import { readQuoteHeads, type QuoteHeadChain, type QuoteHeads } from '../../lib/quote-heads.ts';
import { decodeKeyCursor, encodeKeyCursor } from '../platform/pagination.ts';

const ROWS = loadSql('./quote-rows.sql', import.meta.url);
const ROWS_IN_FILE = loadSql('./quote-rows-file.sql', import.meta.url);
const WINDOW_END_IN_FILE = loadSql('./quote-window-end-file.sql', import.meta.url);
const CHAINS = loadSql('./quote-chains.sql', import.meta.url);
const SOURCES = loadSql('./quote-sources.sql', import.meta.url);
const BY_LEAF = loadSql('./quote-by-leaf.sql', import.meta.url);
const HISTORY_BY_LEAF = loadSql('./history-by-leaf.sql', import.meta.url);
const SOURCE_LEAF = loadSql('./source-leaf.sql', import.meta.url);
const TICKER_CHAIN = loadSql('./ticker-chain.sql', import.meta.url);
const MARKET_FACTS = loadSql('./market-facts.sql', import.meta.url);
const SHARES_AS_OF = loadSql('./market-shares-asof.sql', import.meta.url);
const MARKET_CONTEXT = loadSql('./market-context.sql', import.meta.url);
const WINDOW_END = loadSql('./quote-window-end.sql', import.meta.url);
const SPLIT_DAYS = loadSql('./split-adjusted-days.sql', import.meta.url);
const SPLIT_STALE = loadSql('./split-stale-days.sql', import.meta.url);
const SPLIT_ACTIONS = loadSql('./split-actions.sql', import.meta.url);
const SPLIT_BY_LEAF = loadSql('./split-by-leaf.sql', import.meta.url);

export const QUOTE_SCHEMA_ID = 'proofline/stock-quote/v1';
export const HISTORY_DEFAULT = 30;
export const HISTORY_MAX = 365;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

/** A bar from a quote_bars / quote_leaf_history row (DECIMAL text → number). */
export function barFromRow(r: Row): QuoteBar {
  return {
    ticker: String(r.ticker),
    quote_date: String(r.quote_date),
    adjustment: String(r.adjustment) as Adjustment,
    open: Number(r.open),
    high: Number(r.high),
    low: Number(r.low),
    close: Number(r.close),
    volume: Number(r.volume),
    vwap: num(r.vwap),
    trade_count: num(r.trade_count),
  };
}

interface SourceInfo extends QuoteSource {
  leaf_hash: string;
}

/** Caches source descriptions per reader call (a chain usually has one or two sources). */
class SourceCache {
  private readonly map = new Map<string, Promise<SourceInfo>>();
  /** The sources already read or seeded, for `known` (a page's days share one or two: no await per day). */
  private readonly done = new Map<string, SourceInfo>();
  constructor(private readonly reader: SnapshotReader) {}
  /** A source already known (the chain heads store carries the head's, picked as quote-sources.sql picks it). */
  seed(dataset: string, sha: string, s: { source_url: string | null; retrieved_at: string | null; leaf_hash: string }): void {
    const k = `${dataset}|${sha}`;
    if (this.map.has(k)) return;
    const src: SourceInfo = { source: dataset, content_sha256: sha, ...s };
    this.map.set(k, Promise.resolve(src));
    this.done.set(k, src);
  }
  /** The source `get` gives, when already read or seeded; undefined otherwise. */
  known(dataset: string, sha: string): SourceInfo | undefined {
    return this.done.size === 0 ? undefined : this.done.get(`${dataset}|${sha}`);
  }
  get(dataset: string, sha: string): Promise<SourceInfo> {
    const k = `${dataset}|${sha}`;
    let p = this.map.get(k);
    if (!p) {
      p = this.reader.query(SOURCES, { dataset, content_sha256: sha }).then((rows) => {
        const r = rows[0];
        const src: QuoteSource = {
          source: dataset,
          content_sha256: sha,
          source_url: (r?.source_url as string | null) ?? null,
          retrieved_at: (r?.retrieved_at as string | null) ?? null,
        };
        const info = withMembers(src, { leaf_hash: r ? String(r.leaf_hash) : leafTemplate(src).source_leaf_hash });
        this.done.set(k, info);
        return info;
      });
      this.map.set(k, p);
    }
    return p;
  }
}

function sourceLeafOf(s: SourceInfo): OriginLeaf {
  return createLeaf({
    kind: 'source',
    source: s.source,
    source_url: s.source_url,
    retrieved_at: s.retrieved_at,
    content_sha256: s.content_sha256,
    record_sha256: null,
    parent: null,
  });
}

/** One served day: the bar, its flags and its rebuilt leaf (verified against the stored hash). */
export interface QuoteDay {
  quote_date: string;
  adjustment: Adjustment;
  quote: { open: number; high: number; low: number; close: number; volume: number; vwap: number | null; trade_count: number | null };
  flags: string[];
  origin: OriginLeaf;
  /** False when the row's values or links no longer hash to the stored leaf (tampered or corrupted). */
  origin_verified: boolean;
  /**
   * Added field (not in spec 000): null when `quote` is the stored bar; set when the stored split_dividend bar predates
   * a split (stale) and `quote` was re-derived from the raw bar and the split(s) after it (see SplitAdjustment).
   */
  split_adjustment: SplitAdjustment | null;
}

/** One split applied to a served day: its reference file and the split's record leaf (origin_leaves). */
export interface AppliedSplit {
  ex_date: string;
  split_from: number;
  split_to: number;
  /** The reference file (under the quotes input), as recorded in quote_corporate_actions. */
  file: string;
  origin: OriginLeaf | null;
}

/**
 * How a served split_dividend day was re-derived (docs/quotes-and-transcripts.md, "Splits served"). The day's
 * `origin` is then a `quote_split_adjusted` leaf: `content_sha256`/`source_url` of the (first) split's reference
 * file, `record_sha256` = SHA-256 of RFC 8785 `record`, `parent` = the raw bar's chained leaf (which names the raw
 * file). The stored adjusted bar and its chained leaf stay in `stored`: the next day's `origin.parent` is its hash.
 */
export interface SplitAdjustment {
  status: 'stale';
  /** Product of split_to / split_from over the splits after the day: prices ÷ factor, volume × factor. */
  split_factor: number;
  /** The record hashed into `origin.record_sha256`: the served bar's fields, the factor and the splits' leaves. */
  record: Record<string, unknown>;
  raw: { quote: QuoteDay['quote']; origin: OriginLeaf; origin_verified: boolean };
  stored: { quote: QuoteDay['quote']; origin: OriginLeaf; origin_verified: boolean };
  splits: AppliedSplit[];
}

/** Rebuilds leaves for rows newest-first; `older` is the row before the last one (or null at the chain start). */
async function daysFromRows(rows: Row[], older: Row | null, sources: SourceCache): Promise<QuoteDay[]> {
  const out: QuoteDay[] = [];
  // A page's days mostly share one source file: the previous day's is taken again without a lookup.
  let src: SourceInfo | null = null;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    const prev = i + 1 < rows.length ? rows[i + 1] : older;
    const dataset = String(r.dataset);
    const sha = String(r.content_sha256);
    if (src === null || src.content_sha256 !== sha || src.source !== dataset)
      src = sources.known(dataset, sha) ?? (await sources.get(dataset, sha));
    const parent = Number(r.day_index) === 0 || !prev ? src.leaf_hash : String(prev.leaf_hash);
    const bar = barFromRow(r);
    const leaf = quoteDayLeaf(src, parent, bar);
    out.push({
      quote_date: bar.quote_date,
      adjustment: bar.adjustment,
      quote: {
        open: bar.open,
        high: bar.high,
        low: bar.low,
        close: bar.close,
        volume: bar.volume,
        vwap: bar.vwap,
        trade_count: bar.trade_count,
      },
      flags: (r.flags as string[] | null) ?? [],
      origin: leaf,
      origin_verified: leaf.leaf_hash === r.leaf_hash,
      split_adjustment: null,
    });
  }
  return out;
}

const quoteOf = (b: QuoteBar): QuoteDay['quote'] => ({
  open: b.open,
  high: b.high,
  low: b.low,
  close: b.close,
  volume: b.volume,
  vwap: b.vwap,
  trade_count: b.trade_count,
});

/**
 * Serves split_dividend days whose stored bar is stale (fetched before a later split: quote_split_adjustments
 * status 'stale') with the split-adjusted values re-derived from the raw bar, so the adjusted close is continuous
 * across the split. Days already agreeing with the splits are served as stored. `days` are of one ticker's
 * split_dividend chain; a snapshot without quote_split_adjustments (published before it existed) serves them as stored.
 */
async function applySplitAdjustments(
  reader: SnapshotReader,
  ticker: string,
  days: QuoteDay[],
  sources: SourceCache,
  known?: QuoteHeads['stale'],
): Promise<QuoteDay[]> {
  if (days.length === 0 || days[0].adjustment !== 'split_dividend') return days;
  const dates = days.map((d) => d.quote_date).sort();
  const span = { ticker, from: dates[0], to: dates[dates.length - 1] };
  // The chain heads store knows the ticker's stale days (`known`, null: none): no query when none falls in the span.
  if (known === null || (known && (known.last < span.from || known.first > span.to))) return days;
  let rows: Row[];
  try {
    // Nearly every answer has no stale day: a count on quote_split_adjustments (~1 ms at full scale) spares the
    // raw-bar window of split-adjusted-days.sql (~100 ms: the ticker's whole raw series) when there is none.
    if (known === undefined) {
      const [stale] = await reader.query(SPLIT_STALE, span);
      if (Number(stale?.n ?? 0) === 0) return days;
    }
    rows = await reader.query(SPLIT_DAYS, span);
  } catch (e) {
    if (e instanceof PipelineError) throw e;
    return days;
  }
  if (rows.length === 0) return days;
  const actions = new Map<string, Row>();
  for (const a of await reader.query(SPLIT_ACTIONS, { ticker }))
    if (!actions.has(String(a.origin_leaf_hash))) actions.set(String(a.origin_leaf_hash), a);
  const leaves = new Map<string, OriginLeaf | null>();
  const splitLeaf = async (h: string) => {
    if (!leaves.has(h)) {
      const [s] = await reader.query(SOURCE_LEAF, { leaf_hash: h });
      leaves.set(h, s ? leafFromRow(s) : null);
    }
    return leaves.get(h)!;
  };
  const byDate = new Map(rows.map((r) => [String(r.quote_date), r]));
  const out: QuoteDay[] = [];
  for (const day of days) {
    const r = byDate.get(day.quote_date);
    if (!r) {
      out.push(day);
      continue;
    }
    const rawBar = barFromRow(r);
    const src = await sources.get(String(r.dataset), String(r.content_sha256));
    const rawParent = Number(r.day_index) === 0 || r.prev_leaf_hash == null ? src.leaf_hash : String(r.prev_leaf_hash);
    const rawLeaf = quoteLeaf(src, rawParent, quoteRecordSha256(rawBar));
    const splitHashes = (r.split_leaf_hashes as string[]).map(String);
    const splits: AppliedSplit[] = [];
    for (const h of splitHashes) {
      const a = actions.get(h);
      splits.push({
        ex_date: a ? String(a.ex_date) : '',
        split_from: a ? Number(a.split_from) : Number.NaN,
        split_to: a ? Number(a.split_to) : Number.NaN,
        file: a ? String(a.file) : '',
        origin: await splitLeaf(h),
      });
    }
    const served: QuoteBar = withMembers(rawBar, {
      adjustment: 'split_dividend',
      open: Number(r.adjusted_open),
      high: Number(r.adjusted_high),
      low: Number(r.adjusted_low),
      close: Number(r.adjusted_close),
      volume: Number(r.adjusted_volume),
      vwap: r.adjusted_vwap == null ? null : Number(r.adjusted_vwap),
    });
    const factor = Number(r.split_factor);
    const record = splitAdjustedRecord(served, factor, splitHashes);
    const origin = splitAdjustedLeaf(record, splits[0]?.origin ?? null, rawLeaf.leaf_hash);
    const rawVerified = rawLeaf.leaf_hash === r.raw_leaf_hash && rawLeaf.leaf_hash === r.leaf_hash;
    const storedVerified = day.origin_verified && day.origin.leaf_hash === r.stored_leaf_hash;
    const splitsVerified = splits.length > 0 && splits.every((x) => x.origin !== null && verifyLeaf(x.origin));
    out.push(
      withMembers(day, {
        quote: quoteOf(served),
        origin,
        origin_verified: rawVerified && storedVerified && splitsVerified,
        split_adjustment: {
          status: 'stale',
          split_factor: factor,
          record,
          raw: { quote: quoteOf(rawBar), origin: rawLeaf, origin_verified: rawVerified },
          stored: { quote: day.quote, origin: day.origin, origin_verified: day.origin_verified },
          splits,
        },
      }),
    );
  }
  return out;
}

function leafFromRow(s: Row): OriginLeaf {
  return createLeaf({
    kind: String(s.kind),
    source: String(s.source),
    source_url: (s.source_url as string | null) ?? null,
    retrieved_at: (s.retrieved_at as string | null) ?? null,
    content_sha256: (s.content_sha256 as string | null) ?? null,
    record_sha256: (s.record_sha256 as string | null) ?? null,
    parent: (s.parent as string | null) ?? null,
  });
}

export interface ResolvedTicker {
  ticker: string;
  name: string | null;
  cik: number | null;
  /** The identity card's `peak_metrics.employees` (latest 10-K Item 1 figure), or null. */
  employees?: number | null;
  /**
   * The company's market-facts.sql rows and share counts, when the registry answered from its packed identity
   * record (service/company findCompanyIdentity): marketContext then runs no query. Not served.
   */
  registryRows?: { facts: Row[]; shares: Row[] };
}

/**
 * Resolves a path segment to the ticker quotes are stored under: through the
 * registry (ticker or CIK) when it knows the company, else the ticker as
 * given (ETFs such as SPY are not SEC registrants with tickers in the registry).
 */
export async function resolveQuoteTicker(
  registry: SnapshotReader | undefined,
  raw: string,
  opts: { marketRows?: boolean } = {},
): Promise<ResolvedTicker> {
  const ref = parseCompanyRef(raw);
  if (registry) {
    try {
      // No hint query for an unknown ticker: the NotFoundError is dropped below (quotes of an ETF, not a registrant).
      // `marketRows: false` (the history, which has no market context): the company's name, kept per snapshot.
      if (opts.marketRows === false) return await findCompanyName(registry, raw, { hints: ref.ticker === null });
      const { company: c, facts, shares } = await findCompanyIdentity(registry, raw, { hints: ref.ticker === null });
      return {
        ticker: String(c.ticker),
        name: (c.name as string | null) ?? null,
        cik: c.cik == null ? null : Number(c.cik),
        employees: c.employees == null ? null : Number(c.employees),
        ...(facts && shares ? { registryRows: { facts, shares } } : {}),
      };
    } catch (e) {
      if (!(e instanceof NotFoundError) && !(e instanceof PipelineError && e.code === 'proofline:source-unavailable')) throw e;
      if (!ref.ticker) throw e;
    }
  }
  if (!ref.ticker)
    throw new NotFoundError(`no company with CIK '${ref.cik}'`, {
      response: { ticker: String(ref.cik), hint: 'quotes are looked up by ticker' },
    });
  return { ticker: normalizeTicker(ref.ticker), name: null, cik: null };
}

/**
 * A chain of a ticker as the answers use it. With the chain heads store (lib/quote-heads.ts) it comes from there
 * with its head bar, the one quote_bars file holding it and the ticker's stale days; a snapshot without the store
 * gives the quote-chains.sql row alone (`head` null, `file` null, `stale` undefined: unknown).
 */
interface Chain {
  adjustment: Adjustment;
  last_date: string;
  first_date: string;
  days: number;
  head: QuoteHeadChain | null;
  file: string | null;
  stale: QuoteHeads['stale'] | undefined;
}

async function chainsOf(quotes: SnapshotReader, t: ResolvedTicker): Promise<Chain[]> {
  const found = await readQuoteHeads(quotes, t.ticker);
  const chains: Chain[] = found
    ? (found.heads?.chains ?? []).map((c) => ({
        adjustment: c.adjustment as Adjustment,
        last_date: c.last_date,
        first_date: c.first_date,
        days: c.days,
        head: c,
        file: c.part === null ? null : (found.barFiles[c.part] ?? null),
        stale: found.heads?.stale ?? null,
      }))
    : (await quotes.query(CHAINS, { ticker: t.ticker })).map((r) => ({
        adjustment: String(r.adjustment) as Adjustment,
        last_date: String(r.last_date),
        first_date: String(r.first_date),
        days: Number(r.days),
        head: null,
        file: null,
        stale: undefined,
      }));
  if (chains.length === 0) {
    throw new NotFoundError(`no quotes for '${t.ticker}'`, {
      response: { ticker: t.ticker, hint: 'quotes cover the tickers of the ingested bar files' },
    });
  }
  return chains;
}

function pickChain(chains: Chain[], adjustment: Adjustment | undefined, ticker: string): Chain {
  const c = adjustment ? chains.find((x) => x.adjustment === adjustment) : chains[0];
  if (!c)
    throw new NotFoundError(`no ${adjustment} quotes for '${ticker}'`, {
      response: { ticker, hint: `available: ${chains.map((x) => x.adjustment).join(', ')}` },
    });
  return c;
}

/** quote-rows.sql for a chain known by ticker and series: from its one file when the heads store names it. */
async function barsOf(reader: SnapshotReader, ticker: string, adjustment: string, to: string, limit: number): Promise<Row[]> {
  const found = await readQuoteHeads(reader, ticker);
  const part = found?.heads?.chains.find((c) => c.adjustment === adjustment)?.part ?? null;
  const file = part === null ? null : (found?.barFiles[part] ?? null);
  const p = { ticker, adjustment, to, from: null, limit };
  return file ? reader.query(ROWS_IN_FILE, withMembers(p, { file })) : reader.query(ROWS, p);
}

/** A chain's bars newest first from `to` down (quote-rows.sql), from its one file when the heads store names it. */
function chainRows(quotes: SnapshotReader, ticker: string, chain: Chain, to: string, limit: number): Promise<Row[]> {
  const p = { ticker, adjustment: chain.adjustment, to, from: null, limit };
  return chain.file ? quotes.query(ROWS_IN_FILE, withMembers(p, { file: chain.file })) : quotes.query(ROWS, p);
}

export interface MarketContext {
  market_cap: number | null;
  shares_outstanding: number | null;
  /** Period end of the EDGAR shares-outstanding fact used: the latest on or before the quote date. */
  shares_as_of: string | null;
  /** When that fact was filed (form and accession are in `note` and `origin`). */
  shares_filed: string | null;
  /** Spec 000 `market_context.employees` (an integer): the identity card's figure, else EDGAR dei:EntityNumberOfEmployees. */
  employees: number | null;
  employees_as_of: string | null;
  /** Where `employees` comes from: `10-K Item 1` (the identity card's figure) or `companyfacts`. */
  employees_source: string | null;
  /** What the numbers rest on, or why they are missing. */
  note: string;
  origin: unknown;
}

/**
 * Market cap = close × shares outstanding AS OF the quote date: the latest
 * EDGAR shares-outstanding fact (dei:EntityCommonStockSharesOutstanding, or
 * the us-gaap/ifrs fallback) whose period end is on or before `quoteDate`,
 * from the registry's `company_share_counts` (one fact per period end). A
 * registry snapshot without that table falls back to the latest fact
 * (`company_facts`), and `note` says so; a quote older than every fact uses
 * the earliest one, flagged in `note`. When the registry has no facts, every
 * value is null and `note` says why.
 */
export async function marketContext(
  registry: SnapshotReader | undefined,
  cik: number | null,
  close: number,
  quoteDate: string,
  adjustment: Adjustment,
  cardEmployees: number | null = null,
  known?: ResolvedTicker['registryRows'],
): Promise<MarketContext> {
  const card = {
    employees: cardEmployees,
    employees_as_of: null,
    employees_source: cardEmployees === null ? null : '10-K Item 1 (the identity card figure)',
  };
  const empty = (note: string): MarketContext => ({
    market_cap: null,
    shares_outstanding: null,
    shares_as_of: null,
    shares_filed: null,
    ...card,
    note,
    origin: null,
  });
  if (!registry || cik === null) return empty('company not in the registry: no EDGAR facts to compute market cap');
  let rows: Row[];
  let asOf: Row | undefined;
  let rule = 'the latest count on or before the quote date';
  try {
    if (known) {
      // The company's packed identity record (read with the company, so from the same registry snapshot): the
      // rows of market-context.sql without a query; the as-of pick is market-shares-asof.sql's rule.
      rows = known.facts;
      asOf = pickSharesAsOf(known.shares, quoteDate);
    } else {
      // Both reads in one query; a registry snapshot lacking one of the tables gets the two reads below.
      const both = await registry.query(MARKET_CONTEXT, { cik, quote_date: quoteDate });
      rows = both.filter((r) => r.kind === 'fact');
      asOf = both.find((r) => r.kind === 'as_of');
    }
  } catch (e) {
    if (e instanceof PipelineError) throw e;
    try {
      rows = await registry.query(MARKET_FACTS, { cik });
    } catch (e2) {
      if (e2 instanceof PipelineError) throw e2;
      return empty('the registry snapshot has no company_facts table yet: market cap unavailable');
    }
    try {
      [asOf] = await registry.query(SHARES_AS_OF, { cik, quote_date: quoteDate });
    } catch (e2) {
      if (e2 instanceof PipelineError) throw e2;
      rule = 'the latest count (this registry snapshot has no share-count history)';
    }
  }
  const shares = asOf ?? rows.find((r) => r.metric === 'shares_outstanding');
  const emp = rows.find((r) => r.metric === 'employees');
  // The identity card's figure first (spec 000: market_context.employees is the integer the card shows).
  const employees =
    cardEmployees !== null || !emp
      ? card
      : { employees: Math.round(Number(emp.value)), employees_as_of: String(emp.period_end), employees_source: 'companyfacts' };
  if (!shares) return withMembers(empty('no shares-outstanding fact in EDGAR companyfacts for this company'), employees);
  const n = Number(shares.value);
  const periodEnd = String(shares.period_end);
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  const after = periodEnd > quoteDate;
  return {
    market_cap: Math.round(n * close),
    shares_outstanding: n,
    shares_as_of: periodEnd,
    shares_filed: String(shares.filed),
    ...employees,
    note: `close (${adjustment}) of ${quoteDate} × shares outstanding as of ${periodEnd} (${shares.form} ${shares.accession}, filed ${shares.filed}): ${after ? 'no count on or before the quote date, the earliest one' : rule}${after ? '; the share count is dated after the quote' : ''}`,
    origin: parse(shares.origin),
  };
}

export interface QuoteQueryDeps {
  quotes: SnapshotReader;
  registry?: SnapshotReader;
}

/** GET /api/company/{ticker}/quote: the latest bar of the preferred (or requested) series. */
export async function getLatestQuote(d: QuoteQueryDeps, rawTicker: string, opts: { adjustment?: Adjustment } = {}) {
  const t = await resolveQuoteTicker(d.registry, rawTicker);
  const chain = pickChain(await chainsOf(d.quotes, t), opts.adjustment, t.ticker);
  const adjustment = chain.adjustment;
  const sources = new SourceCache(d.quotes);
  let rows: Row[];
  let older: Row | null;
  if (chain.head) {
    // The head bar and its parent's leaf hash are in the heads store: no read of quote_bars.
    const h = chain.head;
    if (h.source) sources.seed(h.head.dataset, h.head.content_sha256, h.source);
    rows = [h.head as unknown as Row];
    older = h.parent_leaf_hash === null ? null : { leaf_hash: h.parent_leaf_hash };
  } else {
    const found = await chainRows(d.quotes, t.ticker, chain, chain.last_date, 2);
    rows = found.slice(0, 1);
    older = found[1] ?? null;
  }
  const [day] = await applySplitAdjustments(d.quotes, t.ticker, await daysFromRows(rows, older, sources), sources, chain.stale);
  return {
    schema: QUOTE_SCHEMA_ID,
    ticker: t.ticker,
    name: t.name,
    quote_date: day.quote_date,
    adjustment,
    quote: day.quote,
    flags: day.flags,
    market_context: await marketContext(
      d.registry,
      t.cik,
      day.quote.close,
      day.quote_date,
      adjustment,
      t.employees ?? null,
      t.registryRows,
    ),
    origin: day.origin,
    origin_verified: day.origin_verified,
    split_adjustment: day.split_adjustment,
  };
}

/** The day before / after a YYYY-MM-DD date (UTC calendar arithmetic). */
function shiftDay(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * GET /api/company/{ticker}/quote/history: a window of `limit` trading days, newest first, each day with its
 * chained leaf. Pages like every list route (platform/pagination.ts), by an opaque keyset cursor over the date:
 * without `from` the first page is the latest `limit` days and each next page the `limit` days before it (back to
 * the chain's first day); with `from` (spec 000: the start date) the first page is the `limit` days from `from` and
 * each next page the `limit` days after it (up to the chain's last day). Either way each page is newest first, as
 * the one-window answer always was, and a walk gets every day of the chain (from `from` on) exactly once. The
 * cursor holds the series, so a walk stays on it when a newer snapshot would change the default one.
 */
export async function getQuoteHistory(
  d: QuoteQueryDeps,
  rawTicker: string,
  opts: { limit?: number; from?: string; adjustment?: Adjustment; cursor?: string } = {},
) {
  const requested = opts.limit ?? HISTORY_DEFAULT;
  if (!Number.isInteger(requested) || requested < 1)
    throw new InvalidInputError(`invalid parameter 'limit': must be a positive integer`, { response: { parameter: 'limit' } });
  const limit = Math.min(requested, HISTORY_MAX);
  const cursor = decodeHistoryCursor(opts.cursor, opts.adjustment);
  const t = await resolveQuoteTicker(d.registry, rawTicker, { marketRows: false });
  const chain = pickChain(await chainsOf(d.quotes, t), cursor?.adjustment ?? opts.adjustment, t.ticker);
  const adjustment = chain.adjustment;
  // Forward (with `from`): the window is the `limit` trading days starting at `start`; backward: the `limit` days up
  // to `to` (the latest day on the first page, the day before the previous page's oldest day after it).
  const forward = cursor ? cursor.dir === 'after' : Boolean(opts.from);
  const start = cursor?.dir === 'after' ? shiftDay(cursor.date, 1) : (opts.from ?? null);
  let to = cursor?.dir === 'before' ? shiftDay(cursor.date, -1) : String(chain.last_date);
  if (forward && start) {
    const w = { ticker: t.ticker, adjustment, from: start, offset: limit - 1 };
    const [end] = await (chain.file
      ? d.quotes.query(WINDOW_END_IN_FILE, withMembers(w, { file: chain.file }))
      : d.quotes.query(WINDOW_END, w));
    if (end) to = String(end.quote_date);
  }
  // One extra (older) row gives the parent of the oldest day served. The latest page is in the heads store when it
  // holds limit + 1 bars, or the whole chain (derive-heads.sql: the head and the 30 bars before it).
  const stored = chain.head?.tail ? [chain.head.head, ...chain.head.tail] : null;
  const rows =
    !forward && !cursor && stored && (stored.length >= limit + 1 || stored.length === chain.days)
      ? (stored.slice(0, limit + 1) as unknown as Row[])
      : await chainRows(d.quotes, t.ticker, chain, to, limit + 1);
  let served = rows.slice(0, limit);
  if (forward && start) served = served.filter((r) => String(r.quote_date) >= start);
  const older = rows[served.length] ?? null;
  const sources = new SourceCache(d.quotes);
  if (chain.head?.source) sources.seed(chain.head.head.dataset, chain.head.head.content_sha256, chain.head.source);
  const days = await applySplitAdjustments(d.quotes, t.ticker, await daysFromRows(served, older, sources), sources, chain.stale);
  const newest = served[0] ? String(served[0].quote_date) : null;
  const oldest = served.length ? String(served[served.length - 1]!.quote_date) : null;
  let next_cursor: string | null = null;
  if (forward && newest && newest < String(chain.last_date)) next_cursor = encodeKeyCursor([adjustment, 'after', newest]);
  if (!forward && oldest && older) next_cursor = encodeKeyCursor([adjustment, 'before', oldest]);
  return {
    schema: QUOTE_SCHEMA_ID,
    ticker: t.ticker,
    name: t.name,
    adjustment,
    count: days.length,
    limit,
    ...(requested > HISTORY_MAX ? { limit_clamped: { requested, max: HISTORY_MAX } } : {}),
    from: opts.from ?? null,
    chain: {
      first_date: chain.first_date,
      last_date: chain.last_date,
      days: chain.days,
      rule: "each day's origin.parent is the previous trading day's leaf_hash; the first day's parent is the source file's leaf. A day served split-adjusted (split_adjustment not null) has a quote_split_adjusted origin (parent: the raw bar's leaf, content_sha256: the split reference file's); its chained leaf is split_adjustment.stored.origin",
    },
    /** Added field: how many served days were re-derived from a split (each has split_adjustment set). */
    split_adjusted_days: days.filter((x) => x.split_adjustment !== null).length,
    quotes: days,
    next_cursor,
  };
}

/** The series, direction and date a quote-history cursor holds; 400 naming `cursor` for another series or a bad one. */
function decodeHistoryCursor(cursor: string | undefined, adjustment: Adjustment | undefined) {
  const k = decodeKeyCursor(cursor, 3);
  if (!k) return null;
  const [adj, dir, date] = k as [string, string, string];
  if ((adj !== 'raw' && adj !== 'split_dividend') || (dir !== 'before' && dir !== 'after') || !/^\d{4}-\d{2}-\d{2}$/.test(date))
    throw new InvalidInputError("'cursor' is not a cursor of this list", { response: { parameter: 'cursor' } });
  if (adjustment && adjustment !== adj)
    throw new InvalidInputError(`'cursor' is a cursor of the ${adj} series, not ${adjustment}`, { response: { parameter: 'cursor' } });
  return { adjustment: adj as Adjustment, dir, date };
}

export interface FoundQuoteLeaf {
  leaf: OriginLeaf;
  /**
   * `quote_bars` (current), `quote_leaf_history` (superseded fork), `origin_leaves` (a source file), or
   * `quote_split_adjustments` (a stale adjusted day served split-adjusted: its chain continues with the raw bar's).
   */
  table: 'quote_bars' | 'quote_leaf_history' | 'origin_leaves' | 'quote_split_adjustments';
  record: Record<string, unknown> | null;
  /** The leaf and its ancestors, walk order (this leaf first, the source file's leaf last). */
  chain: OriginLeaf[];
  truncated: boolean;
  /** Every rebuilt leaf hashes to its stored hash and links to the next. */
  valid: boolean;
  superseded: { superseded_by: string | null; reason: string; fork_date: string } | null;
}

/**
 * Finds any quote leaf by hash (current day, superseded fork, or source file)
 * and returns it with its parent chain up to `maxDepth` leaves. For /api/verify.
 * Returns null when no quote leaf has this hash.
 */
export async function findQuoteLeaf(
  reader: SnapshotReader,
  leafHash: string,
  opts: { maxDepth?: number } = {},
): Promise<FoundQuoteLeaf | null> {
  if (!isSha256Hex(leafHash))
    throw new InvalidInputError(`'${leafHash}' is not a lower-case SHA-256 hex digest`, { response: { parameter: 'leaf_hash' } });
  const maxDepth = Math.max(1, opts.maxDepth ?? 400);
  const sources = new SourceCache(reader);
  // Two point queries (key → bar key, then the bar's chain), not a join: both tables are parquet views.
  let rows: Row[] = [];
  for (const k of await reader.query(BY_LEAF, { leaf_key: BigInt(`0x${leafHash.slice(0, 15)}`) })) {
    const chain = await barsOf(reader, String(k.ticker), String(k.adjustment), String(k.quote_date), maxDepth + 1);
    if (chain[0]?.leaf_hash === leafHash && String(chain[0].quote_date) === String(k.quote_date)) {
      rows = chain;
      break;
    }
  }
  if (rows.length) {
    const within = rows.slice(0, maxDepth);
    const days = await daysFromRows(within, rows[maxDepth] ?? null, sources);
    const chain = days.map((d) => d.origin);
    let valid = days.every((d) => d.origin_verified);
    const last = within[within.length - 1];
    const reachedStart = Number(last.day_index) === 0;
    if (reachedStart) chain.push(sourceLeafOf(await sources.get(String(last.dataset), String(last.content_sha256))));
    valid &&= chain.every((l, i) => i === chain.length - 1 || l.parent === chain[i + 1].leaf_hash);
    return {
      leaf: chain[0],
      table: 'quote_bars',
      record: quoteRecord(barFromRow(rows[0]!)),
      chain,
      truncated: !reachedStart,
      valid,
      superseded: null,
    };
  }
  const [h] = await reader.query(HISTORY_BY_LEAF, { leaf_hash: leafHash });
  if (h) {
    const src = await sources.get(String(h.dataset), String(h.content_sha256));
    const bar = barFromRow(h);
    const leaf = quoteLeaf(src, String(h.parent), quoteRecordSha256(bar));
    const up = maxDepth > 1 ? await findQuoteLeaf(reader, String(h.parent), { maxDepth: maxDepth - 1 }) : null;
    const chain = [leaf, ...(up?.chain ?? [])];
    return {
      leaf,
      table: 'quote_leaf_history',
      record: quoteRecord(bar),
      chain,
      truncated: up ? up.truncated : true,
      valid: leaf.leaf_hash === leafHash && (up?.valid ?? false),
      superseded: { superseded_by: (h.superseded_by as string | null) ?? null, reason: String(h.reason), fork_date: String(h.fork_date) },
    };
  }
  const [s] = await reader.query(SOURCE_LEAF, { leaf_hash: leafHash });
  if (s) {
    const leaf = leafFromRow(s);
    return {
      leaf,
      table: 'origin_leaves',
      record: null,
      chain: [leaf],
      truncated: false,
      valid: leaf.leaf_hash === leafHash,
      superseded: null,
    };
  }
  return findSplitAdjustedLeaf(reader, leafHash, maxDepth, sources);
}

/** findQuoteLeaf for a quote_split_adjusted leaf: rebuilt as the routes serve it, then the raw bar's chain. */
async function findSplitAdjustedLeaf(
  reader: SnapshotReader,
  leafHash: string,
  maxDepth: number,
  sources: SourceCache,
): Promise<FoundQuoteLeaf | null> {
  let hit: Row | undefined;
  try {
    [hit] = await reader.query(SPLIT_BY_LEAF, { leaf_hash: leafHash });
  } catch (e) {
    if (e instanceof PipelineError) throw e;
    return null; // a snapshot published before served_leaf_hash existed
  }
  if (!hit) return null;
  const ticker = String(hit.ticker);
  const date = String(hit.quote_date);
  const rows = await barsOf(reader, ticker, 'split_dividend', date, 2);
  if (String(rows[0]?.quote_date) !== date) return null;
  const [day] = await applySplitAdjustments(reader, ticker, await daysFromRows(rows.slice(0, 1), rows[1] ?? null, sources), sources);
  if (!day?.split_adjustment || day.origin.leaf_hash !== leafHash) return null;
  const up = maxDepth > 1 ? await findQuoteLeaf(reader, String(day.origin.parent), { maxDepth: maxDepth - 1 }) : null;
  return {
    leaf: day.origin,
    table: 'quote_split_adjustments',
    record: day.split_adjustment.record,
    chain: [day.origin, ...(up?.chain ?? [])],
    truncated: up ? up.truncated : true,
    valid: day.origin_verified && (up?.valid ?? false),
    superseded: null,
  };
}

export interface ChainVerification {
  ticker: string;
  valid: boolean;
  chains: Array<{
    adjustment: Adjustment;
    days: number;
    head_leaf_hash: string;
    recomputed_head: string;
    valid: boolean;
    first_mismatch: { quote_date: string; stored_leaf_hash: string; recomputed_leaf_hash: string } | null;
  }>;
}

/**
 * Re-verifies every chain of a ticker from the stored columns: recomputes each
 * record hash and leaf from the source leaf forward and compares with the
 * stored leaf hashes. One cent changed in any stored row shows up as the first
 * mismatch at that date.
 */
export async function verifyQuoteChain(reader: SnapshotReader, rawTicker: string): Promise<ChainVerification> {
  const ticker = normalizeTicker(rawTicker);
  const rows = await reader.query(TICKER_CHAIN, { ticker });
  if (rows.length === 0) throw new NotFoundError(`no quotes for '${ticker}'`, { response: { ticker } });
  const sources = new SourceCache(reader);
  const chains: ChainVerification['chains'] = [];
  let i = 0;
  while (i < rows.length) {
    const adjustment = String(rows[i].adjustment) as Adjustment;
    let head: string | null = null;
    let first: ChainVerification['chains'][number]['first_mismatch'] = null;
    let n = 0;
    let stored = '';
    for (; i < rows.length && rows[i].adjustment === adjustment; i++, n++) {
      const r = rows[i];
      const src = await sources.get(String(r.dataset), String(r.content_sha256));
      const parent: string = head ?? src.leaf_hash;
      head = quoteLeafHash(leafTemplate(src), parent, quoteRecordSha256(barFromRow(r)));
      stored = String(r.leaf_hash);
      if (!first && head !== stored) first = { quote_date: String(r.quote_date), stored_leaf_hash: stored, recomputed_leaf_hash: head };
    }
    chains.push({ adjustment, days: n, head_leaf_hash: stored, recomputed_head: head!, valid: first === null, first_mismatch: first });
  }
  return { ticker, valid: chains.every((c) => c.valid), chains };
}
