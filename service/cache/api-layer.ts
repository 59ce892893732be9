/**
 * The cross-cutting HTTP layer, one h3 middleware applied to every route:
 *
 * - /api/*: identifies the client (Bearer API key → Pro tier, else the IP →
 *   Free tier), counts the request (429 with Retry-After over the hourly
 *   limit), merges `usage_meta` into JSON object bodies, sets the
 *   `RateLimit-Limit/Remaining/Reset/Policy` headers, and queues one query-log
 *   row. An unknown or revoked key is a 401 (never silently downgraded).
 * - Hot cache: 200 and 404 bodies of snapshot-determined GET routes (CACHEABLE_PREFIXES)
 *   are served from memory; the cache is dropped on every snapshot swap.
 * - Conditional GET: a weak ETag over the body without usage_meta (which varies
 *   per request); `If-None-Match` that matches → 304 (still metered).
 * - Compression: brotli or gzip by Accept-Encoding for bodies ≥ 1 KiB.
 * - CORS for GET/HEAD (any origin, no credentials) and OPTIONS preflights;
 *   `/mcp` is left to its own origin policy.
 * - Unknown /api paths answer the same `{error, status}` 404 shape as the rest.
 *
 * Hot path: a metered GET whose body is in the hot cache is answered by
 * `ApiLayer.answerFromCache`, a transport-free function over a `LayerRequest`.
 * The h3 middleware calls it first; service/main.ts also calls it straight
 * from the node:http listener before handing the request to h3, so a cache hit
 * costs metering plus one socket write (issue 7: at least half the
 * throughput of a bare node:http server). Both transports run the same code,
 * so the answers are the same bytes (test/api/hot-path.test.ts).
 */
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type { H3, H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { errorResponse } from '../http.ts';
import type { ServiceDeps } from '../deps.ts';
import { InvalidApiKeyError, UsageService, usageMetaJson, type ClientIdentity, type Metered } from '../usage/usage.service.ts';
import { etagOf, ResponseCache, type CachedResponse } from './response-cache.ts';

/** GET routes whose 200 bodies depend only on the published snapshots (cached until the next swap). */
export const CACHEABLE_PREFIXES = ['/api/company/', '/api/person/', '/api/search', '/api/signals'];

/** Non-/api documents that get ETag, compression and CORS (no metering). */
const DOCUMENT_PATHS = new Set(['/openapi.json', '/docs', '/.well-known/proofline-keys.json']);

const COMPRESS_MIN_BYTES = 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
const EXPOSE_HEADERS = 'ETag, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, X-Proofline-Cache';
const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSE_HEADERS,
};
const PREFLIGHT_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Authorization, If-None-Match, Content-Type',
  'access-control-max-age': '86400',
};
const kNotFound = Symbol.for('h3.notFound');
type ResponseBody = ConstructorParameters<typeof Response>[0];

function isCacheable(pathname: string): boolean {
  for (const p of CACHEABLE_PREFIXES) if (pathname.startsWith(p)) return true;
  return false;
}

/** Picks `br` or `gzip` from an Accept-Encoding header (q=0 excluded), or null. */
export function chooseEncoding(accept: string | null): 'br' | 'gzip' | null {
  if (!accept) return null;
  let br = false;
  let gzip = false;
  for (const part of accept.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p))) continue;
    if (name === 'br') br = true;
    else if (name === 'gzip' || name === '*') gzip = true;
  }
  return br ? 'br' : gzip ? 'gzip' : null;
}

function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** Merges `"usage_meta": …` as the last member of a JSON object text; other texts are returned unchanged. */
export function mergeUsageMeta(json: string, metaJson: string): string {
  let end = json.length - 1;
  while (end > 0 && json.charCodeAt(end) <= 32) end--;
  if (json.charCodeAt(0) !== 123 /* { */ || json.charCodeAt(end) !== 125 /* } */) return json;
  let i = end - 1;
  while (i > 0 && json.charCodeAt(i) <= 32) i--;
  const empty = i === 0;
  return `${json.slice(0, end)}${empty ? '' : ','}"usage_meta":${metaJson}}`;
}

interface Outcome {
  status: number;
  /** JSON text (without usage_meta) when the response is JSON. */
  json: string | null;
  /** Any other body. */
  raw: ResponseBody | null;
  contentType: string;
  headers: Headers | null;
  ticker: string | null;
}

function tickerOf(pathname: string, val: unknown): string | null {
  if (!pathname.startsWith('/api/company/')) return null;
  const v = val as { identity?: { ticker?: unknown }; ticker?: unknown } | null;
  const t = v?.identity?.ticker ?? v?.ticker;
  if (typeof t === 'string') return t;
  const seg = pathname.slice('/api/company/'.length).split('/')[0];
  return seg ? decodeURIComponent(seg).toUpperCase() : null;
}

async function toOutcome(event: H3Event, val: unknown, pathname: string, deps: ServiceDeps): Promise<Outcome> {
  if (val === kNotFound || val === undefined) {
    const json = JSON.stringify({ error: `no endpoint ${event.req.method} ${pathname}; see /openapi.json`, status: 404, path: pathname });
    return { status: 404, json, raw: null, contentType: JSON_TYPE, headers: null, ticker: null };
  }
  if (val instanceof Response) {
    const ct = val.headers.get('content-type') ?? '';
    if (ct.includes('json')) return { status: val.status, json: await val.text(), raw: null, contentType: ct, headers: val.headers, ticker: val.status < 300 ? tickerOf(pathname, null) : null };
    return { status: val.status, json: null, raw: val.body, contentType: ct, headers: val.headers, ticker: null };
  }
  if (typeof val === 'string') return { status: event.res.status ?? 200, json: null, raw: val, contentType: 'text/plain; charset=utf-8', headers: null, ticker: null };
  if (val instanceof Uint8Array || val instanceof ReadableStream || val instanceof Blob) {
    return { status: event.res.status ?? 200, json: null, raw: val as ResponseBody, contentType: 'application/octet-stream', headers: null, ticker: null };
  }
  try {
    return { status: event.res.status ?? 200, json: JSON.stringify(val), raw: null, contentType: JSON_TYPE, headers: null, ticker: tickerOf(pathname, val) };
  } catch (e) {
    return toOutcome(event, errorResponse(e, deps.log), pathname, deps);
  }
}


/** True when a handler's headers carry nothing a cached copy would lose (content-type is kept with the entry). */
function onlyContentType(h: Headers | null): boolean {
  if (!h) return true;
  for (const [k] of h) if (k !== 'content-type') return false;
  return true;
}

/** What the layer needs of a request, whatever the transport (h3 event or node:http). */
export interface LayerRequest {
  method: string;
  pathname: string;
  /** `?…` or ''. */
  search: string;
  /** Lower-case header name → value (first value), or null/undefined. */
  header(name: string): string | null | undefined;
  ip: string | undefined;
}

/** A finished response: status, plain header object (lower-case names), body. */
export interface LayerResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | ReadableStream | Blob | null;
}

/**
 * The final response: conditional GET, compression, headers. Returned as a
 * plain object so it can be written by srvx (as a FastResponse over a plain
 * header object, which srvx writes straight to the socket) or directly by the
 * node:http hot path.
 */
function finish(req: LayerRequest, status: number, body: string | ResponseBody | null, headers: Record<string, string>, etag: string | null, extra: Headers | null): LayerResponse {
  if (extra) {
    for (const [k, v] of extra) if (k !== 'content-length' && !(k in headers)) headers[k] = v;
  }
  if (etag && status === 200) {
    headers.etag = etag;
    if (etagMatches(req.header('if-none-match') ?? null, etag)) {
      delete headers['content-type'];
      return { status: 304, headers, body: null };
    }
  }
  if (typeof body === 'string' && body.length >= COMPRESS_MIN_BYTES) {
    const enc = chooseEncoding(req.header('accept-encoding') ?? null);
    headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
    if (enc) {
      headers['content-encoding'] = enc;
      const bytes = enc === 'br' ? brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } }) : gzipSync(body);
      return { status, headers, body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    }
  }
  return { status, headers, body: body as LayerResponse['body'] };
}

function toFastResponse(r: LayerResponse): Response {
  return new FastResponse(r.body as ResponseBody, { status: r.status, headers: r.headers });
}

/** A metered request: who, its count, the usage_meta text and the headers every /api answer carries. */
interface MeteredRequest {
  id: ClientIdentity;
  m: Metered;
  nowMs: number;
  metaJson: string;
  headers: Record<string, string>;
}

/**
 * The /api part of the layer, shared by both transports. Holds the cache and
 * the usage service (created lazily in memory when main.ts did not build one).
 */
export class ApiLayer {
  readonly cache: ResponseCache;
  private usagePromise: Promise<UsageService> | null = null;

  constructor(private readonly deps: ServiceDeps) {
    this.cache = deps.responseCache ??= new ResponseCache();
    for (const r of Object.values(deps.readers)) r.onSwap(() => this.cache.clear());
  }

  /** The usage service, synchronously once it exists. */
  getUsage(): Promise<UsageService> | UsageService {
    const d = this.deps;
    if (d.usage) return d.usage;
    this.usagePromise ??= UsageService.create({ dataDir: d.options.dataDir, log: d.log }).then((u) => (d.usage = u));
    return this.usagePromise;
  }

  /**
   * Identifies and counts one /api request. Returns the finished 401 or 429
   * answer, or the metered request to continue with. Synchronous unless the
   * counter is in Redis.
   */
  meter(usage: UsageService, req: LayerRequest, t0: number): LayerResponse | MeteredRequest | Promise<LayerResponse | MeteredRequest> {
    let id: ClientIdentity;
    try {
      id = usage.identify(req.header('authorization') ?? null, req.ip, req.header('user-agent') ?? null);
    } catch (e) {
      if (!(e instanceof InvalidApiKeyError)) throw e;
      const body = JSON.stringify({ error: `${e.message}: send 'Authorization: Bearer <key>' with an active key, or no Authorization header for the free tier`, status: 401 });
      return { status: 401, headers: { ...CORS_HEADERS, 'content-type': JSON_TYPE, 'www-authenticate': 'Bearer realm="proofline", error="invalid_token"' }, body };
    }
    const nowMs = this.deps.now().getTime();
    const m = usage.meter(id, nowMs);
    return m instanceof Promise ? m.then((mm) => this.afterCount(usage, req, id, mm, nowMs, t0)) : this.afterCount(usage, req, id, m, nowMs, t0);
  }

  private afterCount(usage: UsageService, req: LayerRequest, id: ClientIdentity, m: Metered, nowMs: number, t0: number): LayerResponse | MeteredRequest {
    const metaJson = usageMetaJson(id, m, this.deps.options.publicBaseUrl, usage.proHourlyLimit);
    // An object literal, not `{...CORS_HEADERS, …}`: spreading then adding dashed keys drops V8 into
    // dictionary mode, about 9 µs a request on this machine.
    const headers: Record<string, string> = {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSE_HEADERS,
      'content-type': JSON_TYPE,
      'cache-control': 'private, no-cache',
      vary: 'Authorization',
      'ratelimit-limit': String(m.hourly_limit),
      'ratelimit-remaining': String(m.remaining),
      'ratelimit-reset': String(m.reset_seconds),
      'ratelimit-policy': `${m.hourly_limit};w=3600`,
    };
    if (m.over_limit) {
      headers['retry-after'] = String(m.reset_seconds);
      const body = JSON.stringify({ error: `hourly limit of ${m.hourly_limit} requests reached for the ${id.tier} tier; retry in ${m.reset_seconds} s`, status: 429, retry_after_seconds: m.reset_seconds });
      usage.record({ ts_ms: nowMs, client: id.client, tier: id.tier, agent_type: id.agent_type, method: req.method, path: req.pathname, ticker: null, status: 429, duration_ms: performance.now() - t0 });
      return finish(req, 429, mergeUsageMeta(body, metaJson), headers, null, null);
    }
    return { id, m, nowMs, metaJson, headers };
  }

  /**
   * Answers a metered GET whose body is in the hot cache, or returns null
   * (not a GET of a cacheable path, nothing cached, or metering not ready):
   * the caller then runs the full route. Counting happens only when this
   * answers, so a null never double-counts.
   */
  answerFromCache(req: LayerRequest): LayerResponse | Promise<LayerResponse> | null {
    if (req.method !== 'GET' || !isCacheable(req.pathname)) return null;
    const hit = this.cache.get(req.pathname + req.search);
    if (!hit) return null;
    const usage = this.deps.usage;
    if (!usage) return null;
    const t0 = performance.now();
    const metered = this.meter(usage, req, t0);
    return metered instanceof Promise ? metered.then((x) => this.hitResponse(usage, req, x, hit, t0)) : this.hitResponse(usage, req, metered, hit, t0);
  }

  private hitResponse(usage: UsageService, req: LayerRequest, x: LayerResponse | MeteredRequest, hit: CachedResponse, t0: number): LayerResponse {
    if (!('id' in x)) return x;
    const { id, nowMs, headers, metaJson } = x;
    headers['x-proofline-cache'] = 'hit';
    headers['content-type'] = hit.contentType;
    usage.record({ ts_ms: nowMs, client: id.client, tier: id.tier, agent_type: id.agent_type, method: req.method, path: req.pathname, ticker: hit.ticker, status: hit.status, duration_ms: performance.now() - t0 });
    return finish(req, hit.status, mergeUsageMeta(hit.json, metaJson), headers, hit.status === 200 ? hit.etag : null, null);
  }
}

/** The request as the layer sees it, from an h3 event (a class: see NodeLayerRequest in service/node-listener.ts). */
class EventLayerRequest implements LayerRequest {
  readonly method: string;
  readonly pathname: string;
  readonly search: string;
  readonly ip: string | undefined;
  private readonly headers: Headers;
  constructor(event: H3Event) {
    this.method = event.req.method;
    this.pathname = event.url.pathname;
    this.search = event.url.search;
    this.ip = event.req.ip;
    this.headers = event.req.headers;
  }

  header(name: string): string | null {
    return this.headers.get(name);
  }
}

/**
 * Installs the layer on `app` and returns it (service/main.ts uses it for the
 * node:http hot path). Creates `deps.usage` (in-memory counters, query log
 * under DATA_DIR/state) and `deps.responseCache` when main.ts did not, and
 * drops the cache on every reader swap.
 */
export function installApiLayer(app: H3, deps: ServiceDeps): ApiLayer {
  const layer = new ApiLayer(deps);
  const cache = layer.cache;

  app.use(async (event, next) => {
    const pathname = event.url.pathname;
    const method = event.req.method;
    if (pathname.startsWith('/mcp')) return next();
    if (method === 'OPTIONS') return new FastResponse(null, { status: 204, headers: PREFLIGHT_HEADERS });
    const isApi = pathname.startsWith('/api/') || pathname === '/api';
    const req = new EventLayerRequest(event);
    if (!isApi) {
      if (!DOCUMENT_PATHS.has(pathname) || (method !== 'GET' && method !== 'HEAD')) return next();
      const out = await toOutcome(event, await next(), pathname, deps);
      const body = out.json ?? out.raw;
      const headers: Record<string, string> = { ...CORS_HEADERS, 'content-type': out.contentType, 'cache-control': 'public, max-age=300' };
      return toFastResponse(finish(req, out.status, body, headers, typeof body === 'string' ? etagOf(body) : null, out.headers));
    }

    await layer.getUsage();
    const hot = layer.answerFromCache(req);
    if (hot) return toFastResponse(await hot);

    const t0 = performance.now();
    const usage = await layer.getUsage();
    const metered = await layer.meter(usage, req, t0);
    if (!('id' in metered)) return toFastResponse(metered);
    const { id, nowMs, metaJson, headers } = metered;

    const cacheable = (method === 'GET' || method === 'HEAD') && isCacheable(pathname);
    const key = cacheable ? pathname + event.url.search : '';
    // A GET was looked up by answerFromCache already (and missed); a HEAD may still hit.
    let hit: CachedResponse | undefined = cacheable && method === 'HEAD' ? cache.get(key) : undefined;
    let out: Outcome;
    if (hit) {
      headers['x-proofline-cache'] = 'hit';
      out = { status: hit.status, json: hit.json, raw: null, contentType: hit.contentType, headers: null, ticker: hit.ticker };
    } else {
      const gen = cache.generation;
      let val: unknown;
      try {
        val = await next();
      } catch (e) {
        val = errorResponse(e, deps.log);
      }
      out = await toOutcome(event, val, pathname, deps);
      if (cacheable) {
        headers['x-proofline-cache'] = 'miss';
        // 404s of these routes depend only on the snapshot too (unknown ticker, person): cached alike, never with an ETag.
        if (out.json !== null && (out.status === 200 || (out.status === 404 && onlyContentType(out.headers)))) {
          hit = { status: out.status, json: out.json, etag: etagOf(out.json), ticker: out.status === 200 ? out.ticker : null, contentType: out.contentType };
          cache.set(key, hit, gen);
        }
      }
    }
    headers['content-type'] = out.contentType;
    if (out.status === 503 && !headers['retry-after']) headers['retry-after'] = '5';
    usage.record({ ts_ms: nowMs, client: id.client, tier: id.tier, agent_type: id.agent_type, method, path: pathname, ticker: out.ticker, status: out.status, duration_ms: performance.now() - t0 });
    if (out.json === null) return toFastResponse(finish(req, out.status, out.raw, headers, null, out.headers));
    const etag = out.status === 200 && method !== 'POST' ? (hit?.etag ?? etagOf(out.json)) : null;
    return toFastResponse(finish(req, out.status, mergeUsageMeta(out.json, metaJson), headers, etag, out.headers));
  });
  return layer;
}
