/**
 * The agent's only way onto the network: every request goes through
 * `fetchGuarded`, which enforces a timeout, a body-size cap and a redirect
 * limit (each hop re-checked), and refuses private, loopback, link-local and
 * other non-unicast targets unless `allowPrivate` is set, so the agent can be
 * run from a server without becoming an SSRF relay.
 *
 * The default transport is node:http(s) with a guarded DNS `lookup`, so the
 * address actually connected to is the one checked (no DNS-rebinding gap).
 * A caller may pass any fetch-compatible function instead (e.g. `app.fetch`
 * for in-process tests); then literal and resolved host names are checked
 * before the call.
 */
import { PipelineError, type ErrorKind } from '../errors.ts';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Anything fetch-shaped: global fetch, an h3 app's `fetch`, an undici client. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response> | Response;

export interface FetchLimits {
  /** Per request (each redirect hop included), default 10 000 ms. */
  timeoutMs?: number;
  /** Largest body read, default 2 MiB; bigger bodies fail with `too-large`. */
  maxBytes?: number;
  /** Redirects followed per request, default 3. */
  maxRedirects?: number;
  /** Permit loopback/private/link-local targets (tests, local development). Default false. */
  allowPrivate?: boolean;
  /** Transport; default node:http(s) with the guarded lookup. */
  fetch?: FetchLike;
  userAgent?: string;
}

export type FetchFailure = 'bad-url' | 'blocked-target' | 'timeout' | 'too-large' | 'too-many-redirects' | 'network';

/**
 * A request the guard refused or that failed below HTTP. `code` is stable for
 * callers. In the error tree (lib/errors.ts) a refused or malformed target is
 * invalid input (400); a timeout, an oversized body or a network failure is
 * the source being unavailable (503).
 */
export class DiscoveryFetchError extends PipelineError {
  override readonly code: FetchFailure;
  override readonly kind: ErrorKind;
  override readonly httpStatus: number;
  override readonly rpcCode: number;
  override readonly retryable: boolean;
  constructor(
    code: FetchFailure,
    message: string,
    readonly url: string,
  ) {
    super(message, { url, fetch_failure: code });
    this.code = code;
    const invalid = code === 'bad-url' || code === 'blocked-target';
    this.kind = invalid ? 'invalid_input' : 'transient';
    this.httpStatus = invalid ? 400 : 503;
    this.rpcCode = invalid ? -32602 : -32603;
    this.retryable = !invalid;
  }
}

export interface FetchedResource {
  requestedUrl: string;
  /** URL after redirects. */
  url: string;
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** Every URL redirected from, in order. */
  redirects: string[];
}

const DEFAULTS = { timeoutMs: 10_000, maxBytes: 2 * 1024 * 1024, maxRedirects: 3 };
export const DEFAULT_USER_AGENT = 'Proofline-Discovery-Agent/0.1 (+https://github.com/proofline)';

/** True when an IP address is ordinary global unicast (the only kind reachable without allowPrivate). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === 'unicast';
}

function checkUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DiscoveryFetchError('bad-url', `not an absolute URL: ${raw}`, raw);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DiscoveryFetchError('bad-url', `only http and https are fetched, not ${url.protocol}`, raw);
  if (url.username || url.password) throw new DiscoveryFetchError('bad-url', 'URLs with credentials are refused', raw);
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (host === 'localhost' || host.endsWith('.localhost'))
      throw new DiscoveryFetchError('blocked-target', `refusing loopback host ${host} (allowPrivate is off)`, raw);
    if (isIP(host) && !isPublicAddress(host))
      throw new DiscoveryFetchError('blocked-target', `refusing non-public address ${host} (allowPrivate is off)`, raw);
  }
  return url;
}

/**
 * Refuses a target URL the guard would refuse (not http(s), credentials,
 * loopback or other non-public literal address, or a host name resolving to
 * one), before anything is sent: for URLs stored now and fetched later
 * (webhook endpoints). The connection itself is checked again at request time.
 */
export async function assertFetchableTarget(rawUrl: string, allowPrivate = false): Promise<URL> {
  const url = checkUrl(rawUrl, allowPrivate);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && !isIP(host)) {
    const addrs = await dnsLookupAsync(host, { all: true }).catch((e: Error) => {
      throw new DiscoveryFetchError('bad-url', `cannot resolve ${host}: ${e.message}`, rawUrl);
    });
    const bad = addrs.find((a) => !isPublicAddress(a.address));
    if (bad)
      throw new DiscoveryFetchError(
        'blocked-target',
        `refusing non-public address ${bad.address} for ${host} (allowPrivate is off)`,
        rawUrl,
      );
  }
  return url;
}

/** dns.lookup that fails for non-public addresses, used as the socket's lookup so the checked address is the connected one. */
function guardedLookup(
  hostname: string,
  options: object,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, options as { all: true }, (err, addresses: LookupAddress[] | string, family?: number) => {
    if (err) return callback(err, '', 0);
    const list = Array.isArray(addresses) ? addresses : [{ address: addresses, family: family ?? 4 }];
    const bad = list.find((a) => !isPublicAddress(a.address));
    if (bad) {
      const e = new Error(`refusing non-public address ${bad.address} for ${hostname} (allowPrivate is off)`) as NodeJS.ErrnoException;
      e.code = 'EBLOCKEDTARGET';
      return callback(e, '', 0);
    }
    if (Array.isArray(addresses)) callback(null, addresses);
    else callback(null, addresses, family);
  });
}

/** A request other than the agent's GET: webhooks POST a signed body through the same guard (service/monitoring). */
export interface GuardedRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

interface RawResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

function nodeRequest(
  url: URL,
  headers: Record<string, string>,
  limits: Required<Omit<FetchLimits, 'fetch'>>,
  request: GuardedRequest = { method: 'GET' },
): Promise<RawResponse> {
  return new Promise((resolve, rejectOnce) => {
    let settled = false;
    const reject = (e: unknown) => {
      if (!settled) {
        settled = true;
        rejectOnce(e);
      }
    };
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(
      url,
      { method: request.method, headers, lookup: limits.allowPrivate ? undefined : (guardedLookup as never), timeout: limits.timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limits.maxBytes) {
            reject(new DiscoveryFetchError('too-large', `body exceeds ${limits.maxBytes} bytes`, url.href));
            res.destroy();
            req.destroy();
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          if (settled) return;
          settled = true;
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) for (const x of v) h.append(k, x);
            else if (v !== undefined) h.set(k, String(v));
          }
          resolve({ status: res.statusCode ?? 0, headers: h, body: new Uint8Array(Buffer.concat(chunks)) });
        });
        res.on('error', (e) => reject(new DiscoveryFetchError('network', e.message, url.href)));
      },
    );
    // `timeout` above is the socket idle time; this bounds the whole exchange (a slowly trickled body too).
    const overall = setTimeout(() => {
      reject(new DiscoveryFetchError('timeout', `no complete answer within ${limits.timeoutMs} ms`, url.href));
      req.destroy();
    }, limits.timeoutMs);
    overall.unref();
    req.on('close', () => clearTimeout(overall));
    req.on('timeout', () => req.destroy(new DiscoveryFetchError('timeout', `no answer within ${limits.timeoutMs} ms`, url.href)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e instanceof DiscoveryFetchError) reject(e);
      else if (e.code === 'EBLOCKEDTARGET') reject(new DiscoveryFetchError('blocked-target', e.message, url.href));
      else reject(new DiscoveryFetchError('network', `${e.code ?? 'error'}: ${e.message}`, url.href));
    });
    req.end(request.body);
  });
}

async function customRequest(
  url: URL,
  headers: Record<string, string>,
  limits: Required<Omit<FetchLimits, 'fetch'>>,
  f: FetchLike,
  request: GuardedRequest = { method: 'GET' },
): Promise<RawResponse> {
  if (!limits.allowPrivate && !isIP(url.hostname.replace(/^\[|\]$/g, ''))) {
    const addrs = await dnsLookupAsync(url.hostname, { all: true }).catch((e: Error) => {
      throw new DiscoveryFetchError('network', `cannot resolve ${url.hostname}: ${e.message}`, url.href);
    });
    const bad = addrs.find((a) => !isPublicAddress(a.address));
    if (bad)
      throw new DiscoveryFetchError(
        'blocked-target',
        `refusing non-public address ${bad.address} for ${url.hostname} (allowPrivate is off)`,
        url.href,
      );
  }
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), limits.timeoutMs);
  try {
    const res = await f(url.href, { method: request.method, headers, body: request.body, redirect: 'manual', signal: ac.signal });
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limits.maxBytes) {
          await reader.cancel().catch(() => undefined);
          throw new DiscoveryFetchError('too-large', `body exceeds ${limits.maxBytes} bytes`, url.href);
        }
        chunks.push(value);
      }
    }
    return { status: res.status, headers: new Headers(res.headers), body: new Uint8Array(Buffer.concat(chunks)) };
  } catch (e) {
    if (e instanceof DiscoveryFetchError) throw e;
    if (ac.signal.aborted) throw new DiscoveryFetchError('timeout', `no answer within ${limits.timeoutMs} ms`, url.href);
    throw new DiscoveryFetchError('network', (e as Error).message, url.href);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * GETs `rawUrl` within the limits, following at most `maxRedirects` redirects
 * (3xx with Location; each target re-checked). Resolves with any HTTP status;
 * rejects with DiscoveryFetchError for refused targets and transport failures.
 * `request` sends another method, headers and body instead (webhook POSTs; the
 * same guard applies).
 */
export async function fetchGuarded(
  rawUrl: string,
  limits: FetchLimits = {},
  accept = 'application/json, text/html;q=0.8, */*;q=0.5',
  request?: GuardedRequest,
): Promise<FetchedResource> {
  const l = {
    timeoutMs: limits.timeoutMs ?? DEFAULTS.timeoutMs,
    maxBytes: limits.maxBytes ?? DEFAULTS.maxBytes,
    maxRedirects: limits.maxRedirects ?? DEFAULTS.maxRedirects,
    allowPrivate: limits.allowPrivate ?? false,
    userAgent: limits.userAgent ?? DEFAULT_USER_AGENT,
  };
  const headers = { accept, 'user-agent': l.userAgent, ...request?.headers };
  const redirects: string[] = [];
  let current = rawUrl;
  for (;;) {
    const url = checkUrl(current, l.allowPrivate);
    const res = limits.fetch ? await customRequest(url, headers, l, limits.fetch, request) : await nodeRequest(url, headers, l, request);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      if (redirects.length >= l.maxRedirects)
        throw new DiscoveryFetchError('too-many-redirects', `more than ${l.maxRedirects} redirects`, rawUrl);
      redirects.push(url.href);
      current = new URL(location, url).href;
      continue;
    }
    return { requestedUrl: rawUrl, url: url.href, status: res.status, headers: res.headers, body: res.body, redirects };
  }
}

/** The body as UTF-8 text (BOM stripped). */
export function bodyText(r: FetchedResource): string {
  return new TextDecoder('utf-8').decode(r.body).replace(/^\uFEFF/, '');
}

/** Parses the body as JSON; undefined when it is not JSON. */
export function bodyJson(r: FetchedResource): unknown {
  try {
    return JSON.parse(bodyText(r));
  } catch {
    return undefined;
  }
}
