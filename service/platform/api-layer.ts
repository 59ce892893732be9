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
import { STATUS_CODES } from 'node:http';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type { H3, H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { errorResponse } from './http.ts';
import type { ServiceDeps } from './deps.ts';
import { InvalidApiKeyError } from '../../lib/errors.ts';
import { dataSourceOf, UsageService, tierRecommendation, usageMetaJson, usageMetaParts, type ClientIdentity, type Metered, type UsageMetaParts } from './usage.service.ts';
import { logClientPart, logRequestPart } from './query-log.ts';
import { allocBody, uintLength, writeUint } from './bytes.ts';
import { etagOf, ResponseCache, type CachedResponse, type HotEntry } from './response-cache.ts';

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
  /** pathname + search: the hot cache's key. */
  target: string;
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
  const tagged = etag !== null && status === 200;
  if (tagged && etagMatches(req.header('if-none-match') ?? null, etag)) {
    delete headers['content-type'];
    headers.etag = etag;
    return { status: 304, headers, body: null };
  }
  if (typeof body === 'string' && body.length >= COMPRESS_MIN_BYTES) {
    const enc = chooseEncoding(req.header('accept-encoding') ?? null);
    headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
    if (enc) {
      headers['content-encoding'] = enc;
      const bytes = enc === 'br' ? brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } }) : gzipSync(body);
      headers['content-length'] = String(bytes.byteLength);
      if (tagged) headers.etag = etag;
      return { status, headers, body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    }
  }
  // The length is a header of its own (not left to the transport): a HEAD answer, rebuilt by h3 without its body, keeps it.
  if (typeof body === 'string') headers['content-length'] = String(Buffer.byteLength(body));
  else if (body instanceof Uint8Array) headers['content-length'] = String(body.byteLength);
  if (tagged) headers.etag = etag;
  return { status, headers, body: body as LayerResponse['body'] };
}

const kLayerResponse = Symbol('proofline.layerResponse');

/**
 * The Response h3 returns for an answer this layer finished; it keeps the
 * plain form (`layerResponseOf`) so the node:http listener writes it the way
 * it writes a hot answer (service/platform/node-listener.ts). The status text is the
 * standard reason phrase (srvx would send an empty one).
 */
function toFastResponse(r: LayerResponse): Response {
  const res = new FastResponse(r.body as ResponseBody, { status: r.status, statusText: STATUS_CODES[r.status], headers: r.headers });
  (res as unknown as Record<symbol, LayerResponse>)[kLayerResponse] = r;
  return res;
}

/** The finished answer behind a Response of this layer, or undefined for any other Response. */
export function layerResponseOf(res: Response): LayerResponse | undefined {
  return (res as unknown as Record<symbol, LayerResponse | undefined>)[kLayerResponse];
}

/** A counted request under its limit: who, its count, when. */
interface MeteredRequest {
  id: ClientIdentity;
  m: Metered;
  nowMs: number;
}

/** The headers every metered /api answer carries, in the order they are written. */
function meteredHeaders(m: Metered): Record<string, string> {
  // An object literal, not `{...CORS_HEADERS, …}`: spreading then adding dashed keys drops V8 into
  // dictionary mode, about 9 µs a request on this machine.
  return {
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
}

/**
 * What a hot answer needs of its client, built once per memoised identity:
 * usage_meta and the query-log client members as UTF-8 parts, and the
 * constant RateLimit header values.
 */
class HotClient {
  readonly limitText: string;
  readonly policyText: string;
  readonly logClient: Buffer;
  constructor(id: ClientIdentity, readonly meta: UsageMetaParts) {
    this.limitText = String(id.hourly_limit);
    this.policyText = `${id.hourly_limit};w=3600`;
    this.logClient = Buffer.from(logClientPart(id.client, id.tier, id.agent_type, 'GET'));
  }
}

function hotClientOf(id: ClientIdentity, baseUrl: string, proHourlyLimit: number): HotClient {
  const hot = id.hot as HotClient | undefined;
  if (hot !== undefined && hot.meta.baseUrl === baseUrl && hot.meta.proHourlyLimit === proHourlyLimit) return hot;
  return (id.hot = new HotClient(id, usageMetaParts(id, baseUrl, proHourlyLimit)));
}

/**
 * What a hot answer needs of its cache entry, built on its first hit: the
 * body up to where usage_meta goes (`{…,"usage_meta":`) and the query-log
 * request members, as UTF-8. Null `head` when the body is not a JSON object
 * (then nothing is merged, as mergeUsageMeta does).
 */
function hotEntryOf(hit: CachedResponse, pathname: string): HotEntry {
  if (hit.hot) return hit.hot;
  const json = hit.json;
  const merged = mergeUsageMeta(json, '');
  let head: Buffer | null = null;
  let headChars = 0;
  if (merged !== json) {
    const text = merged.slice(0, -1); // `{…,"usage_meta":`
    head = Buffer.from(text);
    headChars = text.length;
  }
  return (hit.hot = { head, headChars, logRequest: Buffer.from(logRequestPart(pathname, hit.ticker, hit.status)) });
}

let resetSeconds = -1;
let resetText = '';
/** `String(s)` for RateLimit-Reset, kept while the second lasts (it changes once a second for everyone). */
function resetHeader(s: number): string {
  if (s !== resetSeconds) {
    resetSeconds = s;
    resetText = String(s);
  }
  return resetText;
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
    if (!m.over_limit) return { id, m, nowMs };
    const headers = meteredHeaders(m);
    headers['retry-after'] = String(m.reset_seconds);
    const body = JSON.stringify({ error: `hourly limit of ${m.hourly_limit} requests reached for the ${id.tier} tier; retry in ${m.reset_seconds} s`, status: 429, retry_after_seconds: m.reset_seconds });
    usage.record({ ts_ms: nowMs, client: id.client, tier: id.tier, agent_type: id.agent_type, method: req.method, path: req.pathname, ticker: null, status: 429, duration_ms: performance.now() - t0 });
    return finish(req, 429, mergeUsageMeta(body, this.metaJson(usage, id, m, req.pathname)), headers, null, null);
  }

  /** The usage_meta text of a counted request for `pathname` (its data source sets the provenance texts). */
  metaJson(usage: UsageService, id: ClientIdentity, m: Metered, pathname: string): string {
    return usageMetaJson(id, m, this.deps.options.publicBaseUrl, usage.proHourlyLimit, dataSourceOf(pathname));
  }

  /**
   * Answers a metered GET whose body is in the hot cache, or returns null
   * (not a GET of a cacheable path, nothing cached, or metering not ready):
   * the caller then runs the full route. Counting happens only when this
   * answers, so a null never double-counts.
   */
  answerFromCache(req: LayerRequest): LayerResponse | Promise<LayerResponse> | null {
    if (req.method !== 'GET' || !isCacheable(req.pathname)) return null;
    const hit = this.cache.get(req.target);
    if (!hit) return null;
    const usage = this.deps.usage;
    if (!usage) return null;
    const t0 = performance.now();
    const metered = this.meter(usage, req, t0);
    return metered instanceof Promise ? metered.then((x) => this.hitResponse(usage, req, x, hit, t0)) : this.hitResponse(usage, req, metered, hit, t0);
  }

  /**
   * The answer to a cache hit. Without If-None-Match and Accept-Encoding (no
   * 304 or compression to decide) the body is assembled as bytes from the
   * entry's and the client's pre-encoded parts; otherwise, and for a body
   * that is not a JSON object, as text through `finish`. Both give the same
   * bytes (test/api/hot-path.test.ts).
   */
  private hitResponse(usage: UsageService, req: LayerRequest, x: LayerResponse | MeteredRequest, hit: CachedResponse, t0: number): LayerResponse {
    if (!('id' in x)) return x;
    const { id, m, nowMs } = x;
    const baseUrl = this.deps.options.publicBaseUrl;
    const client = hotClientOf(id, baseUrl, usage.proHourlyLimit);
    const entry = hotEntryOf(hit, req.pathname);
    const head = entry.head;
    if (head === null || req.header('if-none-match') || req.header('accept-encoding')) {
      usage.queryLog.pushEncoded(nowMs, client.logClient, entry.logRequest, performance.now() - t0);
      const headers = meteredHeaders(m);
      headers['x-proofline-cache'] = 'hit';
      headers['content-type'] = hit.contentType;
      return finish(req, hit.status, mergeUsageMeta(hit.json, this.metaJson(usage, id, m, req.pathname)), headers, hit.status === 200 ? hit.etag : null, null);
    }
    const meta = client.meta;
    const rec = tierRecommendation(id, m);
    const n = m.requests_this_hour;
    const remaining = m.remaining;
    const tail = meta.tail[rec];
    const digits = uintLength(n) + uintLength(remaining);
    const len = head.length + meta.open.length + meta.mid.length + tail.length + digits + 1;
    const body = allocBody(len);
    body.set(head, 0);
    let p = head.length;
    body.set(meta.open, p);
    p = writeUint(body, p + meta.open.length, n);
    body.set(meta.mid, p);
    p = writeUint(body, p + meta.mid.length, remaining);
    body.set(tail, p);
    body[p + tail.length] = 125; // }
    // `finish` decides Vary on the text's length (UTF-16 units): the same count here.
    const vary = entry.headChars + meta.chars[rec] + digits + 1 >= COMPRESS_MIN_BYTES ? 'Authorization, Accept-Encoding' : 'Authorization';
    usage.queryLog.pushEncoded(nowMs, client.logClient, entry.logRequest, performance.now() - t0);
    // One literal with every key in the order `meteredHeaders` + `finish` write them (the ETag last, for 200s only:
    // one map transition, the same every time), instead of a spread and several additions per request.
    const headers: Record<string, string> = {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSE_HEADERS,
      'content-type': hit.contentType,
      'cache-control': 'private, no-cache',
      vary,
      'ratelimit-limit': client.limitText,
      'ratelimit-remaining': String(remaining),
      'ratelimit-reset': resetHeader(m.reset_seconds),
      'ratelimit-policy': client.policyText,
      'x-proofline-cache': 'hit',
      'content-length': String(len),
    };
    if (hit.status === 200) headers.etag = hit.etag;
    return { status: hit.status, headers, body };
  }
}

/** The request as the layer sees it, from an h3 event (a class: see NodeLayerRequest in service/platform/node-listener.ts). */
class EventLayerRequest implements LayerRequest {
  readonly method: string;
  readonly pathname: string;
  readonly search: string;
  readonly target: string;
  readonly ip: string | undefined;
  private readonly headers: Headers;
  constructor(event: H3Event) {
    this.method = event.req.method;
    this.pathname = event.url.pathname;
    this.search = event.url.search;
    this.target = this.pathname + this.search;
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
    if (method === 'OPTIONS') return toFastResponse({ status: 204, headers: { ...PREFLIGHT_HEADERS }, body: null });
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
    const { id, m, nowMs } = metered;
    const headers = meteredHeaders(m);
    const metaJson = layer.metaJson(usage, id, m, pathname);

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
          hit = { status: out.status, json: out.json, etag: etagOf(out.json), ticker: out.status === 200 ? out.ticker : null, contentType: out.contentType, hot: null };
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
