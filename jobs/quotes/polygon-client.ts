/**
 * Polygon-style aggregates API client: daily bars for a ticker and date range,
 * saved as an input file of the quotes pipeline with a `.meta.json` sidecar
 * (source_url without the key, retrieved_at), so the bars' origin chain starts
 * at the exact response bytes. Base URL and key come from POLYGON_BASE_URL and
 * POLYGON_API_KEY; tests point the base URL at a local server replaying the
 * real response fixtures. Polygon's free tier allows 5 requests per minute,
 * hence the default limiter.
 */
import { writeFetchedFile } from '../fetched-file.ts';
import path from 'node:path';
import type { Config } from '../../lib/config.ts';
import { InvalidInputError, ParseError } from '../../lib/errors.ts';
import { HttpClient, TokenBucketLimiter, type RateLimiter } from '../../lib/http-client.ts';
import { parsePolygonAggs, parsePolygonReference, type ParsedQuotes } from '../../ingest/quotes/formats.ts';
import { normalizeTicker } from '../../ingest/quotes/quote.schema.ts';

export interface PolygonClientOptions {
  baseUrl: string;
  apiKey: string | undefined;
  userAgent: string;
  limiter?: RateLimiter;
  attempts?: number;
  backoffMs?: number;
}

export function polygonOptionsFromConfig(config: Config): PolygonClientOptions {
  return {
    baseUrl: config.POLYGON_BASE_URL ?? 'https://api.polygon.io',
    apiKey: config.POLYGON_API_KEY,
    userAgent: config.HTTP_USER_AGENT,
  };
}

export interface FetchedAggs {
  /** The request URL without the API key (what leaves record). */
  source_url: string;
  retrieved_at: string;
  bytes: Buffer;
  sha256: string;
  parsed: ParsedQuotes;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export class PolygonClient {
  private readonly http: HttpClient;
  constructor(readonly opts: PolygonClientOptions) {
    this.http = new HttpClient({
      baseUrl: opts.baseUrl,
      userAgent: opts.userAgent,
      limiter: opts.limiter ?? new TokenBucketLimiter(5 / 60),
      attempts: opts.attempts ?? 4,
      backoffMs: opts.backoffMs ?? 1000,
      headers: { accept: 'application/json' },
    });
  }

  /** Path of the daily aggregates of `ticker` from `from` to `to` (inclusive). */
  static aggsPath(ticker: string, from: string, to: string, adjusted: boolean): string {
    return `/v2/aggs/ticker/${encodeURIComponent(ticker)}/range/1/day/${from}/${to}?adjusted=${adjusted}&sort=asc&limit=50000`;
  }

  /** Fetches and parses daily bars; throws InvalidInputError on bad arguments, SourceUnavailableError/NotFoundError from the client. */
  async dailyAggs(tickerRaw: string, from: string, to: string, adjusted = true): Promise<FetchedAggs> {
    const ticker = normalizeTicker(tickerRaw).replace(/-/g, '.');
    if (!DATE.test(from) || !DATE.test(to) || from > to) throw new InvalidInputError(`invalid date range ${from}..${to}`);
    const rel = PolygonClient.aggsPath(ticker, from, to, adjusted);
    const withKey = this.opts.apiKey ? `${rel}&apiKey=${encodeURIComponent(this.opts.apiKey)}` : rel;
    const res = await this.http.get(withKey);
    const source_url = this.http.url(rel);
    return {
      source_url,
      retrieved_at: res.retrieved_at,
      bytes: res.bytes,
      sha256: res.sha256,
      parsed: parsePolygonAggs(res.bytes, source_url),
    };
  }

  /** Path of the grouped daily bars of the whole US stock market on `date`. */
  static groupedPath(date: string, adjusted: boolean): string {
    return `/v2/aggs/grouped/locale/us/market/stocks/${date}?adjusted=${adjusted}`;
  }

  /**
   * Fetches one day's grouped daily bars (every ticker, one request) into `file` with its sidecar (URL without the
   * key); the body is parsed first, so a response that is not an aggregates response is never written.
   */
  async saveGroupedDaily(file: string, date: string, adjusted: boolean): Promise<string> {
    if (!DATE.test(date)) throw new InvalidInputError(`invalid date ${date}`);
    const rel = PolygonClient.groupedPath(date, adjusted);
    const withKey = this.opts.apiKey ? `${rel}&apiKey=${encodeURIComponent(this.opts.apiKey)}` : rel;
    const res = await this.http.get(withKey);
    const source_url = this.http.url(rel);
    parsePolygonAggs(res.bytes, source_url);
    await writeFetchedFile(file, res.bytes, {
      source_url,
      retrieved_at: res.retrieved_at,
      sha256: res.sha256,
      bytes: res.bytes.byteLength,
    });
    return file;
  }

  /**
   * Path of one day's splits (by execution date) or cash dividends (by ex-dividend date) of the whole market:
   * Polygon's v3 reference endpoints, filtered to the day, one page of up to 1,000 results.
   */
  static referencePath(kind: 'splits' | 'dividends', date: string): string {
    return kind === 'splits'
      ? `/v3/reference/splits?execution_date=${date}&limit=1000`
      : `/v3/reference/dividends?ex_dividend_date=${date}&limit=1000`;
  }

  /**
   * Fetches one day's splits or dividends into `file` with its sidecar (URL without the key). The body is parsed
   * first (a day without actions is an empty `results` list and is written too, so the day is not asked again);
   * a body that is not that reference response is never written. A day with more than one page (`next_url`)
   * has its further pages written beside it (`<name>.p2.json`, …): every page is an input of the pipeline.
   */
  async saveReference(file: string, kind: 'splits' | 'dividends', date: string): Promise<string[]> {
    if (!DATE.test(date)) throw new InvalidInputError(`invalid date ${date}`);
    const written: string[] = [];
    let rel: string | null = PolygonClient.referencePath(kind, date);
    for (let page = 1; rel; page++) {
      const withKey = this.opts.apiKey ? `${rel}${rel.includes('?') ? '&' : '?'}apiKey=${encodeURIComponent(this.opts.apiKey)}` : rel;
      const res = await this.http.get(withKey);
      const source_url = this.http.url(rel);
      const parsed = parsePolygonReference(res.bytes, source_url, kind);
      if (!parsed || parsed.kind !== kind) throw new ParseError(`not a Polygon ${kind} reference response`, { file: source_url });
      const out = page === 1 ? file : file.replace(/\.json$/, `.p${page}.json`);
      await writeFetchedFile(out, res.bytes, {
        source_url,
        retrieved_at: res.retrieved_at,
        sha256: res.sha256,
        bytes: res.bytes.byteLength,
      });
      written.push(out);
      rel = nextPagePath(res.bytes, this.opts.baseUrl);
    }
    return written;
  }

  /** Fetches and writes `<dir>/polygon/<TICKER>_<from>_<to>_<adj>.json` plus its sidecar; returns the file path. */
  async saveDailyAggs(dir: string, ticker: string, from: string, to: string, adjusted = true): Promise<string> {
    const r = await this.dailyAggs(ticker, from, to, adjusted);
    const file = path.join(dir, 'polygon', `${normalizeTicker(ticker)}_${from}_${to}_${adjusted ? 'adjusted' : 'raw'}.json`);
    await writeFetchedFile(file, r.bytes, { source_url: r.source_url, retrieved_at: r.retrieved_at, sha256: r.sha256 });
    return file;
  }
}

/** The path (and query, without any key) of a Polygon response's `next_url` on the configured host, or null. */
function nextPagePath(bytes: Buffer, baseUrl: string): string | null {
  let next: unknown;
  try {
    next = JSON.parse(bytes.toString('utf8'))?.next_url;
  } catch {
    return null;
  }
  if (typeof next !== 'string' || !next) return null;
  const u = new URL(next, baseUrl);
  u.searchParams.delete('apiKey');
  const base = new URL(baseUrl);
  // Only ever follow a page on the configured host (the key is sent there and nowhere else).
  if (u.host !== base.host) return null;
  return `${u.pathname}${u.search}`;
}
