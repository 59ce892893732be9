/**
 * The EDGAR client of the nightly registry job (live fetches; `ingest/` stays
 * pure). SEC fair-access policy, enforced here:
 *
 * - a declared User-Agent naming the operator and an e-mail (`SEC_USER_AGENT`):
 *   without one the client refuses to start (the SEC answers 403 to anonymous tools);
 * - one global limit of at most 10 requests per second across all machines
 *   (default 9): every request takes a slot from one `RateLimiter`, by default
 *   the process's SEC limiter from lib/sec-limiter.ts (Redis-backed with
 *   REDIS_URL, so all workers share it), or any limiter passed in;
 * - transient failures (network, timeout, 429, 5xx) retry with exponential
 *   backoff and jitter (lib/http-client.ts);
 * - the SEC's 403 "Request Rate Threshold Exceeded" page blocks a client for
 *   10 minutes: the client pauses the limiter (every process sharing it) for
 *   `SEC_403_PAUSE_MS` and retries only after the pause.
 *
 * Base URLs are configurable (`SEC_WWW_BASE_URL`, `SEC_DATA_BASE_URL`), so tests
 * replay fixtures from a local server.
 */
import path from 'node:path';
import type { Config } from '../../lib/config.ts';
import { InvalidInputError, NotFoundError, SourceUnavailableError } from '../../lib/errors.ts';
import { HttpClient, TokenBucketLimiter, type HttpResponse, type RateLimiter } from '../../lib/http-client.ts';
import { getSecLimiter, isSecRateLimitPage, SEC_PAUSE_MS } from '../../lib/sec-limiter.ts';
import { padCik } from '../../ingest/edgar/cik.ts';
import { writeFetchedFile } from '../fetched-file.ts';

/** SEC maximum: 10 requests per second per user, all machines together. */
export const SEC_MAX_RATE = 10;

export interface EdgarClientOptions {
  userAgent: string | null | undefined;
  wwwBaseUrl?: string;
  dataBaseUrl?: string;
  /** One limiter for www.sec.gov and data.sec.gov together (the SEC counts both). */
  limiter?: RateLimiter;
  /** Requests per second when no limiter is given (clamped to 10). */
  ratePerSecond?: number;
  /** Pause after the SEC's 403 rate-limit page (default 10 minutes). */
  pauseMs?: number;
  /** How many rate-limit pauses one request may sit out before giving up. */
  maxPauses?: number;
  attempts?: number;
  backoffMs?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

type Pausable = RateLimiter & { pause?: (ms: number, reason?: string) => Promise<void> };

export class EdgarClient {
  readonly www: HttpClient;
  readonly data: HttpClient;
  private readonly limiter: Pausable;
  private pausedUntil = 0;
  /** Rate-limit pages seen (the SEC blocks the whole client, so any one of them pauses every request). */
  private rateLimitPages = 0;

  constructor(private readonly opts: EdgarClientOptions) {
    const ua = opts.userAgent?.trim();
    if (!ua || !/\S+\s+\S+@\S+\.\S+/.test(ua)) {
      throw new InvalidInputError(
        'SEC_USER_AGENT must be set (your name and contact e-mail) before fetching from EDGAR: the SEC refuses undeclared tools',
        { parameter: 'SEC_USER_AGENT' },
      );
    }
    this.limiter = opts.limiter ?? new TokenBucketLimiter(Math.min(SEC_MAX_RATE, opts.ratePerSecond ?? 9));
    const transientResponse = (status: number, body: string) => {
      if (isSecRateLimitPage(status, body)) this.rateLimitPages++;
      return null; // never retried inside HttpClient: get() pauses first
    };
    const common = {
      transientResponse,
      userAgent: ua,
      limiter: this.limiter,
      attempts: opts.attempts ?? 4,
      backoffMs: opts.backoffMs ?? 500,
      timeoutMs: opts.timeoutMs ?? 30_000,
      fetch: opts.fetch,
      headers: { accept: 'application/json, text/html, */*' },
    };
    this.www = new HttpClient({ ...common, baseUrl: opts.wwwBaseUrl ?? 'https://www.sec.gov' });
    this.data = new HttpClient({ ...common, baseUrl: opts.dataBaseUrl ?? 'https://data.sec.gov' });
  }

  /** A client from configuration, sharing the process's SEC limiter unless one is passed. */
  static fromConfig(config: Config, opts: Partial<EdgarClientOptions> = {}): EdgarClient {
    return new EdgarClient({
      userAgent: config.SEC_USER_AGENT,
      wwwBaseUrl: config.SEC_WWW_BASE_URL,
      dataBaseUrl: config.SEC_DATA_BASE_URL,
      limiter: opts.limiter ?? getSecLimiter(config),
      pauseMs: config.SEC_403_PAUSE_MS ?? SEC_PAUSE_MS,
      timeoutMs: config.SEC_TIMEOUT_MS,
      ...opts,
    });
  }

  /** GET with the 403 rate-limit pause: pause every sharer of the limiter, wait it out, try again. */
  async get(client: HttpClient, pathOrUrl: string, signal?: AbortSignal, headers?: Record<string, string>): Promise<HttpResponse> {
    const maxPauses = this.opts.maxPauses ?? 2;
    for (let pauses = 0; ; pauses++) {
      const wait = this.pausedUntil - Date.now();
      if (wait > 0) await sleep(wait, signal);
      const seen = this.rateLimitPages;
      try {
        return await client.get(pathOrUrl, { signal, headers });
      } catch (e) {
        // A plain 403 (no or rejected User-Agent) is final: retrying would not help.
        if (!(e instanceof SourceUnavailableError) || e.context.status !== 403 || this.rateLimitPages === seen) throw e;
        // The SEC blocks the client either way: pause every sharer of the limiter first, then wait or give up.
        const ms = this.opts.pauseMs ?? SEC_PAUSE_MS;
        this.pausedUntil = Date.now() + ms;
        await this.limiter.pause?.(ms, 'sec-403-rate-limit');
        if (pauses >= maxPauses)
          throw new SourceUnavailableError(`SEC rate limit still in force after ${pauses} pauses: ${client.url(pathOrUrl)}`, {
            url: client.url(pathOrUrl),
            status: 403,
            retryAfterMs: ms,
          });
      }
    }
  }

  submissionsPath(cik: number): string {
    return `/submissions/CIK${padCik(cik)}.json`;
  }

  companyFactsPath(cik: number): string {
    return `/api/xbrl/companyfacts/CIK${padCik(cik)}.json`;
  }

  async submissions(cik: number, signal?: AbortSignal): Promise<HttpResponse> {
    return this.get(this.data, this.submissionsPath(cik), signal);
  }

  async companyFacts(cik: number, signal?: AbortSignal): Promise<HttpResponse> {
    return this.get(this.data, this.companyFactsPath(cik), signal);
  }

  /** An Archives document: `/Archives/edgar/data/{cik}/{acc-no-dashes}/{document}`. */
  async document(cik: number, accession: string, document: string, signal?: AbortSignal): Promise<HttpResponse> {
    return this.get(this.www, `/Archives/edgar/data/${cik}/${accession.replace(/-/g, '')}/${document}`, signal);
  }

  async tickers(signal?: AbortSignal): Promise<HttpResponse> {
    return this.get(this.www, '/files/company_tickers_exchange.json', signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export interface FetchReport {
  written: string[];
  missing: Array<{ url: string; reason: string }>;
  failed: Array<{ url: string; reason: string }>;
}

/**
 * Writes bytes and their `<file>.meta.json` sidecar ({source_url, retrieved_at, sha256, bytes}, plus
 * `extra`, e.g. the fetching run's `run_id`) atomically. Temp names carry the pid, so two processes
 * writing the same file never mix their bytes; the last rename wins.
 */
export async function writeWithSidecar(file: string, res: HttpResponse, extra: Record<string, unknown> = {}): Promise<void> {
  await writeFetchedFile(file, res.bytes, {
    source_url: res.url,
    retrieved_at: res.retrieved_at,
    sha256: res.sha256,
    bytes: res.bytes.byteLength,
    status: res.status,
    ...extra,
  });
}

/**
 * The fetch mode of the registry pipeline: downloads per-CIK submissions and
 * companyfacts (and optionally the current ticker file) into
 * `<inputDir>/sec/{submissions,companyfacts,tickers}/`, each with a sidecar, so
 * the next ingest run's origin leaves carry the EDGAR URL and retrieval time.
 * Requests run one at a time through the limiter; a 404 (a CIK without XBRL
 * facts) is reported as missing, other failures as failed, and the rest go on.
 */
export async function fetchEdgarInputs(
  client: EdgarClient,
  opts: { inputDir: string; ciks: number[]; kinds?: Array<'submissions' | 'companyfacts'>; tickers?: boolean; signal?: AbortSignal },
): Promise<FetchReport> {
  const report: FetchReport = { written: [], missing: [], failed: [] };
  const secDir = path.join(opts.inputDir, 'sec');
  const jobs: Array<{ file: string; run: () => Promise<HttpResponse>; url: string }> = [];
  if (opts.tickers)
    jobs.push({
      file: path.join(secDir, 'tickers', 'company_tickers_exchange.json'),
      run: () => client.tickers(opts.signal),
      url: client.www.url('/files/company_tickers_exchange.json'),
    });
  for (const cik of opts.ciks) {
    for (const kind of opts.kinds ?? ['submissions', 'companyfacts']) {
      const p = kind === 'submissions' ? client.submissionsPath(cik) : client.companyFactsPath(cik);
      jobs.push({
        file: path.join(secDir, kind, `CIK${padCik(cik)}.json`),
        run: () => (kind === 'submissions' ? client.submissions(cik, opts.signal) : client.companyFacts(cik, opts.signal)),
        url: client.data.url(p),
      });
    }
  }
  for (const j of jobs) {
    try {
      await writeWithSidecar(j.file, await j.run());
      report.written.push(j.file);
    } catch (e) {
      if (e instanceof NotFoundError) report.missing.push({ url: j.url, reason: 'not found (404)' });
      else if (e instanceof SourceUnavailableError) report.failed.push({ url: j.url, reason: e.message });
      else throw e;
    }
  }
  return report;
}
