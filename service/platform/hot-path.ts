/**
 * The hot path: a metered GET whose body is in the hot cache is answered by
 * `ApiLayer.answerFromCache`, a transport-free function over a `LayerRequest`.
 * The h3 middleware (api-middleware.ts) calls it first; the node:http listener
 * (node-listener.ts) also calls it before handing the request to h3, so a
 * cache hit costs metering plus one socket write (issue 7: at least half the
 * throughput of a bare node:http server). Both transports run the same code,
 * so the answers are the same bytes (test/api/hot-path.test.ts).
 */
import type { ServiceDeps } from './deps.ts';
import { allocBody, uintLength, writeUint } from './bytes.ts';
import { apiKeyRepositoryFor } from './api-keys.state.ts';
import { meteredHeaders, meterRequest, usageMetaText, type MeteredRequest } from './metering.ts';
import { logClientPart, logRequestPart } from './query-log.ts';
import { isCacheable, ResponseCache, type CachedResponse, type HotEntry } from './response-cache.ts';
import { COMPRESS_MIN_BYTES, EXPOSE_HEADERS, finish, mergeUsageMeta, type LayerRequest, type LayerResponse } from './response-finish.ts';
import {
  meterClassOf,
  tierRecommendation,
  usageMetaParts,
  UsageService,
  type ClientIdentity,
  type UsageMetaParts,
} from './usage.service.ts';

/**
 * What a hot answer needs of its client, built once per memoised identity:
 * usage_meta and the query-log client members as UTF-8 parts, and the
 * constant RateLimit header values.
 */
class HotClient {
  readonly limitText: string;
  readonly policyText: string;
  readonly logClient: Buffer;
  constructor(
    id: ClientIdentity,
    readonly meta: UsageMetaParts,
  ) {
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
  return (hit.hot = {
    head,
    headChars,
    logRequest: Buffer.from(logRequestPart(pathname, hit.ticker, hit.status)),
    meterClass: meterClassOf(pathname),
  });
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
    // An app built without metering (tests, embedders): PostgreSQL state still holds the API keys (api-keys.state.ts).
    this.usagePromise ??= UsageService.create({ dataDir: d.options.dataDir, log: d.log, keyRepository: apiKeyRepositoryFor(d.state) }).then(
      (u) => (d.usage = u),
    );
    return this.usagePromise;
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
    // The entry's parts first (built on its first hit, whoever asks): its meter class saves testing the path per hit.
    const entry = hotEntryOf(hit, req.pathname);
    const metered = meterRequest(this.deps, usage, req, t0, entry.meterClass);
    return metered instanceof Promise
      ? metered.then((x) => this.hitResponse(usage, req, x, hit, entry, t0))
      : this.hitResponse(usage, req, metered, hit, entry, t0);
  }

  /**
   * The answer to a cache hit. Without If-None-Match and Accept-Encoding (no
   * 304 or compression to decide) the body is assembled as bytes from the
   * entry's and the client's pre-encoded parts; otherwise, and for a body
   * that is not a JSON object, as text through `finish`. Both give the same
   * bytes (test/api/hot-path.test.ts).
   */
  private hitResponse(
    usage: UsageService,
    req: LayerRequest,
    x: LayerResponse | MeteredRequest,
    hit: CachedResponse,
    entry: HotEntry,
    t0: number,
  ): LayerResponse {
    if (!('id' in x)) return x;
    const { id, m, nowMs } = x;
    const baseUrl = this.deps.options.publicBaseUrl;
    const client = hotClientOf(id, baseUrl, usage.proHourlyLimit);
    const head = entry.head;
    if (head === null || req.header('if-none-match') || req.header('accept-encoding')) {
      usage.queryLog.pushEncoded(nowMs, client.logClient, entry.logRequest, performance.now() - t0);
      const headers = meteredHeaders(m);
      headers['x-proofline-cache'] = 'hit';
      headers['content-type'] = hit.contentType;
      if (hit.link) headers.link = hit.link;
      return finish(
        req,
        hit.status,
        mergeUsageMeta(hit.json, usageMetaText(this.deps, usage, id, m, req.pathname)),
        headers,
        hit.status === 200 ? hit.etag : null,
        null,
      );
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
    if (hit.link) {
      // A page's Link header goes where `finish` puts it, before content-length (pages only leave the one-literal shape).
      delete headers['content-length'];
      headers.link = hit.link;
      headers['content-length'] = String(len);
    }
    if (hit.status === 200) headers.etag = hit.etag;
    return { status: hit.status, headers, body };
  }
}
