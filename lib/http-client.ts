/**
 * The HTTP client every outside source uses (SEC EDGAR, FMCSA QCMobile,
 * Polygon, investor-relations sites): configurable base URL, a declared
 * User-Agent, a rate limiter, a per-request timeout, a body-size cap, and
 * retries with exponential backoff and full jitter for transient failures
 * (network errors, timeouts, 429, 5xx). Errors map onto the project's tree:
 * transient → SourceUnavailableError, 404 → NotFoundError, other 4xx →
 * SourceUnavailableError with `status` in context (the caller decides).
 * Tests point `baseUrl` at a local server that replays fixtures.
 */
import { NotFoundError, SourceUnavailableError } from './errors.ts';
import { sha256Hex } from './hash.ts';

/** Anything that can pace requests: in-process token bucket, or a Redis-backed limiter shared by processes. */
export interface RateLimiter {
  /**
   * Resolves when one more request may be sent. A limiter may resolve with a
   * release callback, which the client calls once the response has arrived (or
   * failed), so the slot covers the request's whole flight (lib/sec-limiter.ts).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a limiter without a release callback resolves to nothing
  acquire(signal?: AbortSignal): Promise<void | (() => void)>;
}

/**
 * In-process token bucket: at most `perSecond` requests in any one-second
 * window, spaced evenly (no bursts), shared by every caller holding it.
 */
export class TokenBucketLimiter implements RateLimiter {
  private next = 0;
  constructor(readonly perSecond: number) {
    if (!(perSecond > 0)) throw new RangeError('perSecond must be > 0');
  }
  async acquire(signal?: AbortSignal): Promise<void> {
    const interval = 1000 / this.perSecond;
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + interval;
    const wait = at - now;
    if (wait > 0) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, wait);
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
  }
}

export interface HttpClientOptions {
  baseUrl: string;
  userAgent: string;
  limiter?: RateLimiter;
  timeoutMs?: number;
  /** Total attempts for transient failures (1 = no retry). */
  attempts?: number;
  backoffMs?: number;
  maxBodyBytes?: number;
  /** Extra headers on every request (e.g. Accept). */
  headers?: Record<string, string>;
  /**
   * Classifies a response as transient even when its status says otherwise
   * (the SEC answers rate-limit violations with 403 and an HTML page).
   * Return a delay in ms to wait before retrying, or null.
   */
  transientResponse?: (status: number, body: string) => number | null;
  fetch?: typeof fetch;
}

export interface HttpResponse {
  url: string;
  status: number;
  headers: Headers;
  bytes: Buffer;
  text(): string;
  json<T = unknown>(): T;
  sha256: string;
  retrieved_at: string;
}

/** A response whose body is streamed (HttpClient.openStream). */
export interface StreamedResponse {
  url: string;
  status: number;
  headers: Headers;
  body: AsyncIterable<Uint8Array>;
  retrieved_at: string;
}

export class HttpClient {
  private readonly fetchImpl: typeof fetch;
  constructor(readonly opts: HttpClientOptions) {
    if (!opts.userAgent.trim()) throw new Error('HttpClient needs a declared User-Agent');
    this.fetchImpl = opts.fetch ?? fetch;
  }

  /** Absolute URL of a path relative to the base URL. */
  url(pathOrUrl: string): string {
    if (/^https?:\/\//.test(pathOrUrl)) return pathOrUrl;
    return `${this.opts.baseUrl.replace(/\/$/, '')}/${pathOrUrl.replace(/^\//, '')}`;
  }

  /** GET with limiter, timeout, retries. Throws SourceUnavailableError / NotFoundError. */
  async get(pathOrUrl: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<HttpResponse> {
    const url = this.url(pathOrUrl);
    const attempts = this.opts.attempts ?? 4;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let retryDelay: number | null = null;
      try {
        const release = await this.opts.limiter?.acquire(init.signal);
        let res: HttpResponse;
        try {
          res = await this.fetchOnce(url, init);
        } finally {
          if (typeof release === 'function') release();
        }
        const retriable = this.classify(res);
        if (retriable === null) {
          if (res.status === 404) throw new NotFoundError(`not found: ${url}`, { url, status: 404 });
          if (res.status >= 400)
            throw new SourceUnavailableError(`HTTP ${res.status} from ${url}`, { url, status: res.status, terminal: true });
          return res;
        }
        retryDelay = retriable;
        lastErr = new SourceUnavailableError(`HTTP ${res.status} from ${url}`, { url, status: res.status, retryAfterMs: retriable });
      } catch (e) {
        if (e instanceof NotFoundError || (e instanceof SourceUnavailableError && e.context.terminal)) throw e;
        if (init.signal?.aborted) throw e;
        lastErr =
          e instanceof SourceUnavailableError
            ? e
            : new SourceUnavailableError(`request to ${url} failed: ${(e as Error).message}`, { url }, { cause: e });
      }
      if (attempt < attempts) {
        const base = this.opts.backoffMs ?? 500;
        const delay = retryDelay !== null && retryDelay >= 0 ? retryDelay : Math.round(Math.random() * base * 2 ** (attempt - 1));
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    throw lastErr;
  }

  /**
   * GET whose body is streamed, never held whole (bulk downloads of gigabytes): limiter, retries with backoff for
   * transient failures before the body starts, `timeoutMs` applied to the wait for the response headers and then
   * to every gap between chunks (an idle stall, not the whole transfer). Resolves with the status and headers and
   * the body as chunks; a 304 (a conditional GET's "unchanged") has an empty body. 404 → NotFoundError, other
   * 4xx → SourceUnavailableError with `status`. A failure while the body streams throws from the iteration.
   */
  async openStream(pathOrUrl: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<StreamedResponse> {
    const url = this.url(pathOrUrl);
    const attempts = this.opts.attempts ?? 4;
    const idleMs = this.opts.timeoutMs ?? 15_000;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const ctl = new AbortController();
      const signal = init.signal ? AbortSignal.any([init.signal, ctl.signal]) : ctl.signal;
      let timer = setTimeout(() => ctl.abort(new SourceUnavailableError(`timeout after ${idleMs} ms: ${url}`, { url })), idleMs);
      let retryDelay = -1;
      try {
        const release = await this.opts.limiter?.acquire(init.signal);
        let res: Response;
        try {
          res = await this.fetchImpl(url, {
            headers: { 'user-agent': this.opts.userAgent, ...this.opts.headers, ...init.headers },
            redirect: 'follow',
            signal,
          });
        } finally {
          if (typeof release === 'function') release();
        }
        if (res.status === 404) throw new NotFoundError(`not found: ${url}`, { url, status: 404 });
        if (res.status === 429 || res.status >= 500) {
          const ra = res.headers.get('retry-after');
          retryDelay = ra && /^\d+$/.test(ra) ? Number(ra) * 1000 : -1;
          await res.body?.cancel().catch(() => undefined);
          throw new SourceUnavailableError(`HTTP ${res.status} from ${url}`, { url, status: res.status });
        }
        if (res.status >= 400) {
          await res.body?.cancel().catch(() => undefined);
          throw new SourceUnavailableError(`HTTP ${res.status} from ${url}`, { url, status: res.status, terminal: true });
        }
        const body = res.body;
        const rearm = () => {
          clearTimeout(timer);
          timer = setTimeout(() => ctl.abort(new SourceUnavailableError(`no data for ${idleMs} ms: ${url}`, { url })), idleMs);
        };
        rearm();
        async function* chunks(): AsyncGenerator<Uint8Array> {
          try {
            if (!body) return;
            for await (const c of body as unknown as AsyncIterable<Uint8Array>) {
              rearm();
              yield c;
            }
          } catch (e) {
            throw ctl.signal.aborted && ctl.signal.reason instanceof SourceUnavailableError
              ? ctl.signal.reason
              : new SourceUnavailableError(`download of ${url} failed: ${(e as Error).message}`, { url }, { cause: e });
          } finally {
            clearTimeout(timer);
          }
        }
        if (res.status === 304) {
          clearTimeout(timer);
          await body?.cancel().catch(() => undefined);
        }
        return {
          url: res.url || url,
          status: res.status,
          headers: res.headers,
          body: res.status === 304 ? (async function* () {})() : chunks(),
          retrieved_at: new Date().toISOString(),
        };
      } catch (e) {
        clearTimeout(timer);
        if (e instanceof NotFoundError || (e instanceof SourceUnavailableError && e.context.terminal)) throw e;
        if (init.signal?.aborted) throw e;
        lastErr =
          e instanceof SourceUnavailableError
            ? e
            : ctl.signal.aborted && ctl.signal.reason instanceof SourceUnavailableError
              ? ctl.signal.reason
              : new SourceUnavailableError(`request to ${url} failed: ${(e as Error).message}`, { url }, { cause: e });
      }
      if (attempt < attempts) {
        const base = this.opts.backoffMs ?? 500;
        await new Promise((r) => setTimeout(r, retryDelay >= 0 ? retryDelay : Math.round(Math.random() * base * 2 ** (attempt - 1))));
      }
    }
    throw lastErr;
  }

  /** Null when the response is final; otherwise the delay before retrying (-1: use exponential backoff). */
  private classify(res: HttpResponse): number | null {
    const custom = this.opts.transientResponse?.(res.status, res.status >= 400 ? res.text() : '');
    if (custom != null) return custom;
    if (res.status === 429 || res.status >= 500) {
      const ra = res.headers.get('retry-after');
      return ra && /^\d+$/.test(ra) ? Number(ra) * 1000 : -1;
    }
    return null;
  }

  private async fetchOnce(url: string, init: { headers?: Record<string, string>; signal?: AbortSignal }): Promise<HttpResponse> {
    const timeout = AbortSignal.timeout(this.opts.timeoutMs ?? 15_000);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await this.fetchImpl(url, {
        headers: { 'user-agent': this.opts.userAgent, 'accept-encoding': 'gzip, deflate', ...this.opts.headers, ...init.headers },
        redirect: 'follow',
        signal,
      });
    } catch (e) {
      if (timeout.aborted) throw new SourceUnavailableError(`timeout after ${this.opts.timeoutMs ?? 15_000} ms: ${url}`, { url });
      throw e;
    }
    const max = this.opts.maxBodyBytes ?? 256 * 1024 * 1024;
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > max) throw new SourceUnavailableError(`response larger than ${max} bytes: ${url}`, { url, terminal: true });
    const chunks: Buffer[] = [];
    let size = 0;
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.byteLength;
        if (size > max) throw new SourceUnavailableError(`response larger than ${max} bytes: ${url}`, { url, terminal: true });
        chunks.push(Buffer.from(chunk));
      }
    }
    const bytes = Buffer.concat(chunks);
    return {
      url: res.url || url,
      status: res.status,
      headers: res.headers,
      bytes,
      text: () => bytes.toString('utf8'),
      json: <T>() => JSON.parse(bytes.toString('utf8')) as T,
      sha256: sha256Hex(bytes),
      retrieved_at: new Date().toISOString(),
    };
  }
}
