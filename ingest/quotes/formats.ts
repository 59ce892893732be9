/**
 * The quote file formats we read, as found in the real fixtures
 * (../shared/fixtures/sec/quotes/):
 *
 * | format        | header / shape                                                        | prices                 |
 * |---------------|-----------------------------------------------------------------------|------------------------|
 * | alpaca-daily  | `Date,symbol,Open,High,Low,Close,Volume,Trades,VWAP`                  | split+dividend adjusted |
 * | alpaca-sdk    | `timestamp,symbol,open,high,low,close,volume,vwap,trade_count`        | raw (as traded)        |
 * | polygon-aggs  | `{ticker, adjusted, results: [{T?, o, h, l, c, v, vw, n, t}]}`        | per `adjusted`         |
 *
 * Alpaca timestamps are midnight America/New_York written in UTC
 * (`2024-06-10 04:00:00+00:00`); Polygon `t` is epoch milliseconds of the same
 * instant. The trading day is the New York calendar date of that instant.
 *
 * CSV files are parsed by DuckDB (`read_csv`, see jobs/quotes/quotes.pipeline.ts)
 * with the column mapping returned here; JSON responses are small and parsed in JS.
 */
import { ParseError } from '../../lib/errors.ts';
import { normalizeTicker, TICKER_RE, type Adjustment, type QuoteBar } from './quote.schema.ts';

export type QuoteCsvFormat = 'alpaca-daily' | 'alpaca-sdk';

/** Source column names of one CSV format, by bar field. */
export interface QuoteCsvLayout {
  format: QuoteCsvFormat;
  adjustment: Adjustment;
  /** Dataset name used in sources and leaves. */
  dataset: string;
  columns: {
    timestamp: string;
    symbol: string;
    open: string;
    high: string;
    low: string;
    close: string;
    volume: string;
    vwap: string;
    trade_count: string;
  };
}

const LAYOUTS: QuoteCsvLayout[] = [
  {
    format: 'alpaca-daily',
    adjustment: 'split_dividend',
    dataset: 'alpaca/bars-1day-adjusted',
    columns: {
      timestamp: 'Date',
      symbol: 'symbol',
      open: 'Open',
      high: 'High',
      low: 'Low',
      close: 'Close',
      volume: 'Volume',
      vwap: 'VWAP',
      trade_count: 'Trades',
    },
  },
  {
    format: 'alpaca-sdk',
    adjustment: 'raw',
    dataset: 'alpaca/bars-1day-raw',
    columns: {
      timestamp: 'timestamp',
      symbol: 'symbol',
      open: 'open',
      high: 'high',
      low: 'low',
      close: 'close',
      volume: 'volume',
      vwap: 'vwap',
      trade_count: 'trade_count',
    },
  },
];

/** Recognises a quote CSV by its header line; throws ParseError naming the file for anything else. */
export function detectQuoteCsvFormat(headerLine: string, file: string): QuoteCsvLayout {
  const cols = headerLine
    .replace(/^\uFEFF/, '')
    .trim()
    .split(',')
    .map((c) => c.trim());
  const key = cols.join(',');
  for (const l of LAYOUTS) {
    const c = l.columns;
    const want =
      l.format === 'alpaca-daily'
        ? [c.timestamp, c.symbol, c.open, c.high, c.low, c.close, c.volume, c.trade_count, c.vwap]
        : [c.timestamp, c.symbol, c.open, c.high, c.low, c.close, c.volume, c.vwap, c.trade_count];
    if (key === want.join(',')) return l;
  }
  throw new ParseError(`unrecognised quote CSV header: ${key.slice(0, 120)}`, { file, line: 1 });
}

/** New York calendar date of an epoch-milliseconds instant (Polygon `t`). */
export function newYorkDate(epochMs: number): string {
  // One formatter for every call, and a memo of the instants seen (a file repeats each day's instant for every
  // ticker): building an Intl.DateTimeFormat per bar cost ~0.3 ms and most of a large file's parse (issue 22).
  const memo = NY_DATES.get(epochMs);
  if (memo !== undefined) return memo;
  const date = NY_DATE_FORMAT.format(new Date(epochMs)); // en-CA formats as YYYY-MM-DD
  if (NY_DATES.size >= 100_000) NY_DATES.clear();
  NY_DATES.set(epochMs, date);
  return date;
}

const NY_DATE_FORMAT = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/New_York',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});
const NY_DATES = new Map<number, string>();

interface PolygonAgg {
  T?: string;
  o?: number;
  h?: number;
  l?: number;
  c?: number;
  v?: number;
  vw?: number;
  n?: number;
  t?: number;
}

export interface ParsedQuotes {
  format: string;
  adjustment: Adjustment;
  dataset: string;
  bars: QuoteBar[];
  rejects: Array<{ line: number | null; reason: string; raw: string | null }>;
}

/**
 * Parses a Polygon aggregates response (`/v2/aggs/ticker/{T}/range/1/day/...`,
 * `/prev`, or `/v2/aggs/grouped/...` where each result names its ticker in `T`).
 * Results lacking a price or timestamp become rejects (position = result index).
 */
export function parsePolygonAggs(bytes: Uint8Array | string, file: string): ParsedQuotes {
  let doc: { ticker?: string; adjusted?: boolean; results?: PolygonAgg[]; status?: string };
  try {
    doc = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    throw new ParseError(`invalid JSON: ${(e as Error).message}`, { file });
  }
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.results ?? []))
    throw new ParseError('not a Polygon aggregates response (no results array)', { file });
  const adjustment: Adjustment = doc.adjusted === false ? 'raw' : 'split_dividend';
  const bars: QuoteBar[] = [];
  const rejects: ParsedQuotes['rejects'] = [];
  (doc.results ?? []).forEach((r, i) => {
    const ticker = normalizeTicker(String(r.T ?? doc.ticker ?? ''));
    const nums = [r.o, r.h, r.l, r.c, r.v];
    if (
      !TICKER_RE.test(ticker) ||
      typeof r.t !== 'number' ||
      nums.some((x) => typeof x !== 'number' || !Number.isFinite(x)) ||
      wholeCount(r.v!) === null
    ) {
      rejects.push({ line: i, reason: 'result lacks ticker, timestamp, o/h/l/c or v', raw: JSON.stringify(r) });
      return;
    }
    bars.push({
      ticker,
      quote_date: newYorkDate(r.t),
      adjustment,
      open: round6(r.o!),
      high: round6(r.h!),
      low: round6(r.l!),
      close: round6(r.c!),
      volume: wholeCount(r.v!)!,
      vwap: typeof r.vw === 'number' ? round6(r.vw) : null,
      trade_count: typeof r.n === 'number' ? wholeCount(r.n) : null,
    });
  });
  return {
    format: 'polygon-aggs',
    adjustment,
    dataset: adjustment === 'raw' ? 'polygon/aggs-1day-raw' : 'polygon/aggs-1day-adjusted',
    bars,
    rejects,
  };
}

/**
 * A volume or trade count as stored (BIGINT): `Math.round(x)`, or null when that is not a finite number in BIGINT's
 * range [-2^63, 2^63) (what DuckDB's `TRY_CAST(… AS BIGINT)` takes). A result whose volume is null is a reject; a null
 * trade count is stored as NULL, as the CSV formats do (jobs/quotes/quotes.pipeline.ts): one absurd value is one
 * rejected result, not a failed file.
 */
export function wholeCount(x: number): number | null {
  const r = Math.round(x);
  return Number.isFinite(r) && r >= -(2 ** 63) && r < 2 ** 63 ? r : null;
}

/** Prices are stored with 6 decimals (DECIMAL(18,6)); JSON inputs are rounded the same way so both paths hash alike. */
export function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

/** One split or cash dividend from Polygon's reference files (`/v3/reference/splits`, `/v3/reference/dividends`). */
export interface CorporateAction {
  ticker: string;
  action: 'split' | 'dividend';
  /** Split execution date, or the dividend's ex-dividend date: the first day the adjusted series changes. */
  ex_date: string;
  split_from: number | null;
  split_to: number | null;
  cash_amount: number | null;
  dividend_type: string | null;
  declaration_date: string | null;
  record_date: string | null;
  pay_date: string | null;
  frequency: number | null;
}

export interface ParsedReference {
  kind: 'splits' | 'dividends';
  dataset: 'polygon/reference-splits' | 'polygon/reference-dividends';
  actions: CorporateAction[];
  rejects: Array<{ line: number | null; reason: string; raw: string | null }>;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Recognises a Polygon splits or dividends reference response (the kind is read from the results' fields:
 * `split_from`/`split_to`/`execution_date`, or `cash_amount`/`ex_dividend_date`) and parses it; returns null for
 * any other body (an aggregates response goes to `parsePolygonAggs`). These files are what the adjusted series
 * rests on: Polygon's adjusted bars divide prices before `ex_date` by `split_to / split_from`. A result lacking
 * its ticker, date or amounts is a reject (position = result index). `expected` (the endpoint asked, or the
 * fetched file's name) makes an empty `results` list a reference response with no actions.
 */
export function parsePolygonReference(
  bytes: Uint8Array | string,
  _file: string,
  expected?: 'splits' | 'dividends',
): ParsedReference | null {
  let doc: { results?: Array<Record<string, unknown>> };
  try {
    doc = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch {
    return null;
  }
  const results = Array.isArray(doc?.results) ? doc.results : null;
  const first = results?.find((r) => r && typeof r === 'object');
  // A day without actions answers `results: []`: a reference response only when the caller knows which one it asked for.
  if (!results || (!first && !expected)) return null;
  const kind = !first
    ? expected!
    : 'split_from' in first || 'execution_date' in first
      ? 'splits'
      : 'cash_amount' in first || 'ex_dividend_date' in first
        ? 'dividends'
        : null;
  if (!kind) return null;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const date = (v: unknown) => (typeof v === 'string' && ISO_DATE.test(v) ? v : null);
  const actions: CorporateAction[] = [];
  const rejects: ParsedReference['rejects'] = [];
  results.forEach((r, i) => {
    const ticker = normalizeTicker(String(r?.ticker ?? ''));
    const base = { ticker, declaration_date: null, record_date: null, pay_date: null, frequency: null };
    if (kind === 'splits') {
      const ex = date(r.execution_date);
      const from = num(r.split_from);
      const to = num(r.split_to);
      if (!TICKER_RE.test(ticker) || !ex || !from || !to || from <= 0 || to <= 0) {
        rejects.push({ line: i, reason: 'split lacks ticker, execution_date, or positive split_from/split_to', raw: JSON.stringify(r) });
        return;
      }
      actions.push({ ...base, action: 'split', ex_date: ex, split_from: from, split_to: to, cash_amount: null, dividend_type: null });
    } else {
      const ex = date(r.ex_dividend_date);
      const cash = num(r.cash_amount);
      if (!TICKER_RE.test(ticker) || !ex || cash === null || cash < 0) {
        rejects.push({ line: i, reason: 'dividend lacks ticker, ex_dividend_date or a cash_amount', raw: JSON.stringify(r) });
        return;
      }
      actions.push({
        ...base,
        action: 'dividend',
        ex_date: ex,
        split_from: null,
        split_to: null,
        cash_amount: round6(cash),
        dividend_type: str(r.dividend_type),
        declaration_date: date(r.declaration_date),
        record_date: date(r.record_date),
        pay_date: date(r.pay_date),
        frequency: num(r.frequency),
      });
    }
  });
  return { kind, dataset: kind === 'splits' ? 'polygon/reference-splits' : 'polygon/reference-dividends', actions, rejects };
}
