/**
 * Company queries, transport-free: HTTP routes and MCP tools call these.
 */
import { NotFoundError, InvalidInputError } from '../../lib/errors.ts';
import { loadSql, type Row } from '../../lib/warehouse/duckdb.ts';
import { textKey } from '../../lib/warehouse/packed-store.ts';
import { readLatestRawClose } from '../../lib/quote-heads.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';

const FIND = loadSql('./find-company.sql', import.meta.url);
const HINTS = loadSql('./company-hints.sql', import.meta.url);
const LATEST_CLOSE = loadSql('./latest-close.sql', import.meta.url);
const SHARES_AS_OF = loadSql('./shares-asof.sql', import.meta.url);

export const COMPANY_SCHEMA_ID = 'proofline/sec-company/v1';

export interface CompanyRef {
  ticker: string | null;
  cik: number | null;
}

/** Parses a path segment as a ticker (`AAPL`, `BRK-B`, `TWO-PA`) or a CIK (`320193`, `0000320193`, `CIK0000320193`). */
export function parseCompanyRef(raw: string): CompanyRef {
  const s = decodeURIComponent(raw).trim();
  const cik = /^(?:CIK)?(\d{1,10})$/i.exec(s);
  if (cik) return { ticker: null, cik: Number(cik[1]) };
  if (!/^[A-Za-z0-9][A-Za-z0-9.\-]{0,14}$/.test(s))
    throw new InvalidInputError(`'${s}' is not a ticker or CIK`, { response: { parameter: 'ticker' } });
  return { ticker: s.toUpperCase().replace(/\./g, '-'), cik: null };
}

export type CompanyRecord = Record<string, unknown>;

/**
 * A company as the identity card and the quote routes read it from the registry: the find-company.sql row, and,
 * from the packed identity record (jobs/registry/packed-identity.sql), the rows of service/quotes/market-facts.sql
 * (`facts`) and every company_share_counts row by period end (`shares`, see pickSharesAsOf). `facts` and `shares`
 * are absent when the row came from SQL (a registry snapshot without the store): the callers then query them.
 */
export interface CompanyIdentity {
  company: CompanyRecord;
  facts?: Row[];
  shares?: Row[];
}

/** The packed stores of the registry identity (jobs/registry/registry-packed.ts). */
const IDENTITY_STORE = 'registry_identity';
const TICKERS_STORE = 'registry_tickers';

interface PackedIdentity {
  lookup: Array<{
    ticker: string;
    cik_padded: string;
    name: string | null;
    exchange: string | null;
    is_primary: boolean;
    status: string;
    status_reason: string | null;
  }>;
  company: Record<string, unknown> | null;
  employees: number | null;
  facts: Row[];
  shares: Row[];
}

/** find-company.sql's row from a packed record and one of its lookup rows: same columns, order and values. */
function companyRow(cik: number, l: PackedIdentity['lookup'][number], rec: PackedIdentity): CompanyRecord {
  const c = rec.company;
  return {
    ticker: l.ticker,
    cik,
    cik_padded: l.cik_padded,
    name: c?.name ?? l.name,
    exchange: l.exchange,
    status: l.status,
    status_reason: l.status_reason,
    sic: c?.sic ?? null,
    sic_description: c?.sic_description ?? null,
    state_of_incorporation: c?.state_of_incorporation ?? null,
    state_of_incorporation_description: c?.state_of_incorporation_description ?? null,
    fiscal_year_end: c?.fiscal_year_end ?? null,
    category: c?.category ?? null,
    entity_type: c?.entity_type ?? null,
    business_address: c?.business_address ?? null,
    former_names: c?.former_names ?? null,
    tickers: c?.tickers ?? null,
    exchanges: c?.exchanges ?? null,
    origin: c?.origin ?? null,
    has_submissions: c !== null,
    employees: rec.employees,
  };
}

/**
 * The company of `ref` from the served registry snapshot's packed stores: a ticker resolves through registry_tickers
 * to its CIK, then the CIK's registry_identity record gives its row (a CIK: the primary ticker's row, as
 * find-company.sql's `l.is_primary`). `undefined` when the snapshot has no such stores (the SQL path runs), null when
 * no company has that ticker or CIK. Both stores are taken from one snapshot before any await; when the reader swaps
 * meanwhile and closes them, the new snapshot's are read once.
 */
async function readPackedIdentity(registry: SnapshotReader, ref: CompanyRef, retry = true): Promise<CompanyIdentity | null | undefined> {
  const tickers = registry.packed(TICKERS_STORE);
  const identity = registry.packed(IDENTITY_STORE);
  if (!tickers || !identity) return undefined;
  try {
    let cik = ref.cik;
    if (ref.ticker !== null) {
      const text = await tickers.get(textKey(ref.ticker));
      const hit = text
        ? (JSON.parse(text) as { rows: Array<{ ticker: string; cik: number }> }).rows.find((r) => r.ticker === ref.ticker)
        : undefined;
      if (!hit) return null;
      cik = hit.cik;
    }
    const text = cik === null ? null : await identity.get(cik);
    if (text === null || cik === null) return null;
    const rec = JSON.parse(text) as PackedIdentity;
    const l = ref.ticker !== null ? rec.lookup.find((x) => x.ticker === ref.ticker) : rec.lookup.find((x) => x.is_primary);
    if (!l) return null;
    return { company: companyRow(cik, l, rec), facts: rec.facts, shares: rec.shares };
  } catch (e) {
    if (retry && (registry.packed(TICKERS_STORE) !== tickers || registry.packed(IDENTITY_STORE) !== identity))
      return readPackedIdentity(registry, ref, false);
    throw e;
  }
}

/**
 * Finds a company by ticker or CIK with what the card and the market context read of it (CompanyIdentity): from the
 * packed stores, without a DuckDB query, else find-company.sql. Throws NotFoundError with close matches as `hint`
 * (company-hints.sql; `hints: false` skips that query, for a caller that drops the error, e.g. quotes of an ETF).
 */
export async function findCompanyIdentity(registry: SnapshotReader, raw: string, opts: { hints?: boolean } = {}): Promise<CompanyIdentity> {
  const ref = parseCompanyRef(raw);
  const packed = await readPackedIdentity(registry, ref);
  if (packed) return packed;
  if (packed === undefined) {
    const rows = await registry.query(FIND, { ticker: ref.ticker, cik: ref.cik });
    if (rows[0]) return { company: rows[0] };
  }
  const q = (ref.ticker ?? String(ref.cik)).toUpperCase();
  const hints = ref.ticker && opts.hints !== false ? await registry.query(HINTS, { q }) : [];
  const hint = hints.filter((h) => Number(h.score) > 0.7).map((h) => `${h.ticker} (${h.name})`);
  throw new NotFoundError(`no company with ticker or CIK '${q}'`, {
    response: { ticker: q, hint: hint.length ? `did you mean ${hint.join(', ')}?` : 'search by name at /api/search?q=...' },
  });
}

/** What the quote history answers of its company: the find-company.sql row's ticker, name, CIK and employees. */
export interface CompanyName {
  ticker: string;
  name: string | null;
  cik: number | null;
  employees: number | null;
}

/** Per served registry_identity store: each ticker (`t:` key) or CIK (`c:`) resolved by findCompanyName, once. */
const companyNames = new WeakMap<object, Map<string, CompanyName>>();

/**
 * findCompanyIdentity reduced to the four values the quote history answers (CompanyName), kept per packed identity
 * store once read: a company's record (about 13 KB of JSON with its share counts and their origins at full scale)
 * is parsed once per snapshot for them, not on every history page (issue 22: the page's CPU and allocation). Only
 * found companies are kept, so the memo is bounded by the store's tickers and CIKs (8,200 companies at full scale, a
 * few dozen bytes each), not by the requests; it is dropped with the store. A snapshot without the packed stores, and
 * any miss, goes through findCompanyIdentity as before (same values, same errors, `hints` as given).
 */
export async function findCompanyName(registry: SnapshotReader, raw: string, opts: { hints?: boolean } = {}): Promise<CompanyName> {
  const ref = parseCompanyRef(raw);
  const store = registry.packed(IDENTITY_STORE);
  const key = ref.ticker !== null ? `t:${ref.ticker}` : `c:${ref.cik}`;
  const known = store ? companyNames.get(store)?.get(key) : undefined;
  if (known) return known;
  const { company: c } = await findCompanyIdentity(registry, raw, opts);
  const found: CompanyName = {
    ticker: String(c.ticker),
    name: (c.name as string | null) ?? null,
    cik: c.cik == null ? null : Number(c.cik),
    employees: c.employees == null ? null : Number(c.employees),
  };
  // Kept only when read from that store, still served (a swap meanwhile: findCompanyIdentity read the new one).
  if (store && registry.packed(IDENTITY_STORE) === store && registry.packed(TICKERS_STORE)) {
    let memo = companyNames.get(store);
    if (!memo) companyNames.set(store, (memo = new Map()));
    memo.set(key, found);
  }
  return found;
}

/** Finds a company by ticker or CIK (its find-company.sql row), or throws NotFoundError with close matches as `hint`. */
export async function findCompany(registry: SnapshotReader, raw: string): Promise<CompanyRecord> {
  return (await findCompanyIdentity(registry, raw)).company;
}

/**
 * The share count as of `asOf` (YYYY-MM-DD) from a company's share counts ordered by period end (the packed
 * record's `shares`): the latest whose period end is on or before `asOf`, else the earliest, the rule of
 * shares-asof.sql and service/quotes/market-shares-asof.sql. Undefined when there is none.
 */
export function pickSharesAsOf(shares: Row[], asOf: string): Row | undefined {
  let best: Row | undefined;
  for (const s of shares) if (String(s.period_end) <= asOf) best = s;
  return best ?? shares[0];
}

function parseJson<T>(v: unknown): T | null {
  if (v == null) return null;
  if (typeof v !== 'string') return v as T;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}

function titleCase(s: string | null | undefined): string | null {
  if (!s) return null;
  return s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());
}

/** How the summary names a company of each `identity.status` (spec 000: active, inactive, acquired, delisted). */
const STATUS_PHRASE: Record<string, string> = {
  active: 'is an SEC registrant',
  inactive: 'is an inactive SEC registrant',
  acquired: 'is a former SEC registrant, since acquired,',
  delisted: 'is a delisted SEC registrant',
};

/** The summary's verb phrase for a status; an unknown status is named, with the right article. */
export function statusPhrase(status: unknown): string {
  const s = String(status ?? 'unknown');
  return STATUS_PHRASE[s] ?? `is ${/^[aeiou]/i.test(s) ? 'an' : 'a'} ${s} SEC registrant`;
}

/** Market capitalisation for the identity card: latest raw close × shares outstanding as of that close. */
export interface IdentityMarketCap {
  market_cap_usd: number;
  close: number;
  quote_date: string;
  shares_outstanding: number;
  shares_as_of: string;
}

/**
 * `peak_metrics.market_cap_usd` (spec 000, a number): the latest raw close of the company's ticker (quotes
 * domain) × its EDGAR shares outstanding as of that date (registry), the same rule as the /quote market context.
 * Null only when this instance serves no quotes, the ticker has no bars, or EDGAR gives no share count.
 */
export async function getIdentityMarketCap(
  registry: SnapshotReader,
  quotes: SnapshotReader | undefined,
  c: CompanyRecord,
  knownShares?: Row[],
): Promise<IdentityMarketCap | null> {
  if (!quotes) return null;
  let bar: Record<string, unknown> | undefined;
  let shares: Record<string, unknown> | undefined;
  try {
    // The latest raw close from the quotes domain's chain heads store (no read of quote_bars; parsed once per
    // snapshot and ticker, lib/quote-heads.ts); a snapshot without the store reads quote_bars (latest-close.sql).
    const latest = await readLatestRawClose(quotes, String(c.ticker));
    if (latest !== undefined) bar = latest ? { quote_date: latest.quote_date, close: latest.close } : undefined;
    else [bar] = await quotes.query(LATEST_CLOSE, { ticker: String(c.ticker) });
    if (!bar) return null;
    // The company's share counts from its packed identity record when read from there (same rule, no query).
    if (knownShares) shares = pickSharesAsOf(knownShares, String(bar.quote_date));
    else [shares] = await registry.query(SHARES_AS_OF, { cik: Number(c.cik), as_of: String(bar.quote_date) });
  } catch (e) {
    if (e instanceof NotFoundError || e instanceof InvalidInputError) throw e;
    return null; // a snapshot without these tables (older layout): the card still answers, without a market cap
  }
  if (!shares) return null;
  const close = Number(bar.close);
  const n = Number(shares.value);
  return {
    market_cap_usd: Math.round(n * close),
    close,
    quote_date: String(bar.quote_date),
    shares_outstanding: n,
    shares_as_of: String(shares.period_end),
  };
}

/** The identity card's two sizes: the default (about 200 tokens, spec 000 layer 0) and `detail=full`. */
export type IdentityDetail = 'default' | 'full';

/**
 * Layer 0: the identity card. The default answer is about 200 tokens (spec 000): the specification's fields,
 * and `origin` as the leaf's hash and source (`GET /api/verify/{leaf_hash}` returns the whole leaf, its chain and
 * a signed receipt). `detail=full` adds `cik_padded`, `fiscal_year_end`, `status_reason`, the market-cap basis and
 * the whole origin leaf. `identity.cik` is the CIK as a string of digits without leading zeros (spec 000).
 */
export function buildIdentityCard(
  c: CompanyRecord,
  baseUrl: string,
  opts: { marketCap?: IdentityMarketCap | null; detail?: IdentityDetail } = {},
) {
  const full = opts.detail === 'full';
  const addr = parseJson<Record<string, string | null>>(c.business_address);
  const headquarters = addr ? [titleCase(addr.city), addr.state_or_country].filter(Boolean).join(', ') || null : null;
  const ticker = String(c.ticker);
  const name = String(c.name);
  const parts = [
    `${name} (${c.exchange ? `${c.exchange}: ` : ''}${ticker}) ${statusPhrase(c.status)}`,
    c.sic_description ? ` in ${String(c.sic_description).toLowerCase()} (SIC ${c.sic})` : '',
    headquarters ? `, headquartered in ${headquarters}` : '',
    c.state_of_incorporation ? `, incorporated in ${c.state_of_incorporation_description ?? c.state_of_incorporation}` : '',
    '.',
  ];
  const tags = [
    c.sic_description ? String(c.sic_description).toLowerCase() : null,
    c.exchange ? String(c.exchange).toLowerCase() : null,
    c.category ? String(c.category).toLowerCase() : null,
    c.status as string,
  ].filter((x): x is string => Boolean(x));
  const self = `${baseUrl}/api/company/${encodeURIComponent(ticker)}`;
  const origin = parseJson<Record<string, unknown>>(c.origin);
  const mc = opts.marketCap ?? null;
  return {
    schema: COMPANY_SCHEMA_ID,
    layer: 0,
    identity: {
      name,
      cik: String(Number(c.cik)),
      ...(full ? { cik_padded: c.cik_padded } : {}),
      ticker,
      exchange: c.exchange ?? null,
      sic: c.sic ?? null,
      sic_description: c.sic_description ?? null,
      state_of_incorporation: c.state_of_incorporation ?? null,
      headquarters,
      ...(full ? { fiscal_year_end: c.fiscal_year_end ?? null } : {}),
      status: c.status,
      ...(full ? { status_reason: c.status_reason } : {}),
    },
    summary: parts.join(''),
    // employees: the latest 10-K Item 1 figure (registry profile_facts); market cap: getIdentityMarketCap.
    peak_metrics: {
      market_cap_usd: mc ? mc.market_cap_usd : null,
      employees: c.employees == null ? null : Number(c.employees),
      ...(full
        ? {
            market_cap_basis: mc
              ? `close ${mc.close} (raw) of ${mc.quote_date} × ${mc.shares_outstanding} shares outstanding as of ${mc.shares_as_of}`
              : null,
          }
        : {}),
    },
    tags,
    deeper: {
      profile: `${self}/profile`,
      timeline: `${self}/timeline`,
      filings: `${self}/filings`,
    },
    origin: full || !origin ? origin : { leaf_hash: origin.leaf_hash, source: origin.source },
  };
}

/**
 * The identity card of `tickerOrCik` as every door serves it (REST /api/company/{t}, MCP sec_company and the
 * proofline://company/{t} resource, /ai/query): the company, its market cap from the quotes domain when served,
 * and the layer-0 card (spec 000 identity card). NotFoundError for an unknown ticker or CIK.
 */
export async function getIdentityCard(
  registry: SnapshotReader,
  quotes: SnapshotReader | undefined,
  tickerOrCik: string,
  baseUrl: string,
  detail?: IdentityDetail,
) {
  // With the registry's packed identity stores and the quotes' chain heads store, no DuckDB query runs (issue 22).
  const { company, shares } = await findCompanyIdentity(registry, tickerOrCik);
  const marketCap = await getIdentityMarketCap(registry, quotes, company, shares);
  return buildIdentityCard(company, baseUrl, { marketCap, detail });
}

/** The identity card's answer schema, for families that serve cards inside their own answers (/ai/query). */
export { identityCardAnswer } from './company.schema.ts';
