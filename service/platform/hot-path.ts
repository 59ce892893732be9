/**
 * The hot path: a metered GET whose body is in the hot cache is answered by
 * `ApiLayer.answerFromCache`, a transport-free function over a `LayerRequest`.
 * The h3 middleware (api-middleware.ts) calls it first; the node:http listener
 * (node-listener.ts) also calls it before handing the request to h3, so a
 * cache hit costs metering plus one socket write (issue 7: at least half the
 * throughput of a bare node:http server). Both transports run the same code,
 * so the answers are the same bytes (test/api/hot-path.test.ts).
 */
import { STATUS_CODES } from 'node:http';
import type { ServiceDeps } from './deps.ts';
import { allocBody, uintLength, writeUint } from './bytes.ts';
import { apiKeyRepositoryFor } from './api-keys.state.ts';
import { meteredHeaders, meterRequest, usageMetaText, type MeteredRequest } from './metering.ts';
import { EncodedLogClient, EncodedLogRequest } from './query-log.ts';
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
  readonly logClient: EncodedLogClient;
  /** Wire form: `\r\nratelimit-limit: N\r\nratelimit-remaining: ` and `\r\nratelimit-policy: …\r\nx-proofline-cache: hit\r\n`. */
  readonly wireLimit: Buffer;
  readonly wirePolicy: Buffer;
  constructor(
    id: ClientIdentity,
    readonly meta: UsageMetaParts,
  ) {
    this.limitText = String(id.hourly_limit);
    this.policyText = `${id.hourly_limit};w=3600`;
    this.logClient = new EncodedLogClient(id.client, id.tier, id.agent_type, 'GET');
    this.wireLimit = Buffer.from(`\r\nratelimit-limit: ${this.limitText}\r\nratelimit-remaining: `, 'latin1');
    this.wirePolicy = Buffer.from(`\r\nratelimit-policy: ${this.policyText}\r\nx-proofline-cache: hit\r\n`, 'latin1');
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
    logRequest: new EncodedLogRequest(pathname, hit.ticker, hit.status),
    meterClass: meterClassOf(pathname),
    // The header lines node's writeHead would write for HotAnswer.headers (`key: value\r\n`, in the same order).
    wireHead: Buffer.from(
      `HTTP/1.1 ${hit.status} ${STATUS_CODES[hit.status]}\r\naccess-control-allow-origin: *\r\naccess-control-expose-headers: ${EXPOSE_HEADERS}\r\ncontent-type: ${hit.contentType}\r\ncache-control: private, no-cache\r\nvary: `,
      'latin1',
    ),
    wireLength: Buffer.from(`${hit.link ? `link: ${hit.link}\r\n` : ''}content-length: `, 'latin1'),
    wireEtag: Buffer.from(hit.status === 200 ? `\r\netag: ${hit.etag}\r\n` : '\r\n', 'latin1'),
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
    // A row is logged at the time of logging (QueryLogEntry.ts_ms): the metering's time, unless it waited (Redis).
    return metered instanceof Promise
      ? metered.then((x) => this.hitResponse(usage, req, x, hit, entry, t0, this.deps.now().getTime()))
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
    loggedMs?: number,
  ): LayerResponse {
    if (!('id' in x)) return x;
    const { id, m } = x;
    const nowMs = loggedMs ?? x.nowMs;
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
    const rec = tierRecommendation(id, m);
    const answer = new HotAnswer(hit, entry, client, rec, m.requests_this_hour, m.remaining, m.reset_seconds);
    usage.queryLog.pushEncoded(nowMs, client.logClient, entry.logRequest, performance.now() - t0);
    return answer;
  }
}

const WIRE_VARY_AE = Buffer.from('Authorization, Accept-Encoding', 'latin1');
const WIRE_VARY = Buffer.from('Authorization', 'latin1');
const WIRE_RESET = Buffer.from('\r\nratelimit-reset: ', 'latin1');

/**
 * A hot answer of the byte path. Its body is assembled from the entry's and
 * the client's pre-encoded parts; its headers are `{status, headers, body}`
 * as every layer answer, built only when asked for (the h3 middleware, tests).
 * The node:http listener asks instead for `wire(tail)`: the whole HTTP/1.1
 * response, status line, the same header lines in the same order as node's
 * `writeHead(status, headers)` writes them, the lines node adds (`tail`: Date,
 * Connection, Keep-Alive and the blank line) and the body, in one buffer for
 * one socket write (node-listener.ts `writeHotAnswer`; byte equality with
 * writeHead + end: test/api/hot-path.test.ts).
 */
export class HotAnswer implements LayerResponse {
  readonly status: number;
  /** Body length in bytes. */
  readonly length: number;
  private readonly vary: Buffer;
  private h: Record<string, string> | undefined;
  private b: Uint8Array | undefined;

  constructor(
    private readonly hit: CachedResponse,
    private readonly entry: HotEntry,
    private readonly client: HotClient,
    private readonly rec: 'pro' | 'free',
    private readonly n: number,
    private readonly remaining: number,
    private readonly reset: number,
  ) {
    this.status = hit.status;
    const meta = client.meta;
    const digits = uintLength(n) + uintLength(remaining);
    this.length = entry.head!.length + meta.open.length + meta.mid.length + meta.tail[rec].length + digits + 1;
    // `finish` decides Vary on the text's length (UTF-16 units): the same count here.
    this.vary = entry.headChars + meta.chars[rec] + digits + 1 >= COMPRESS_MIN_BYTES ? WIRE_VARY_AE : WIRE_VARY;
  }

  /** Writes the body at `p` of `buf`; returns the position after it. */
  private writeBody(buf: Uint8Array, p: number): number {
    const head = this.entry.head!;
    const meta = this.client.meta;
    const tail = meta.tail[this.rec];
    buf.set(head, p);
    p += head.length;
    buf.set(meta.open, p);
    p = writeUint(buf, p + meta.open.length, this.n);
    buf.set(meta.mid, p);
    p = writeUint(buf, p + meta.mid.length, this.remaining);
    buf.set(tail, p);
    buf[p + tail.length] = 125; // }
    return p + tail.length + 1;
  }

  get body(): Uint8Array {
    if (this.b === undefined) {
      this.b = allocBody(this.length);
      this.writeBody(this.b, 0);
    }
    return this.b;
  }

  get headers(): Record<string, string> {
    if (this.h !== undefined) return this.h;
    const hit = this.hit;
    const client = this.client;
    // One literal with every key in the order `meteredHeaders` + `finish` write them (the ETag last, for 200s only:
    // one map transition, the same every time), instead of a spread and several additions per request.
    const headers: Record<string, string> = {
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSE_HEADERS,
      'content-type': hit.contentType,
      'cache-control': 'private, no-cache',
      vary: this.vary === WIRE_VARY_AE ? 'Authorization, Accept-Encoding' : 'Authorization',
      'ratelimit-limit': client.limitText,
      'ratelimit-remaining': String(this.remaining),
      'ratelimit-reset': resetHeader(this.reset),
      'ratelimit-policy': client.policyText,
      'x-proofline-cache': 'hit',
      'content-length': String(this.length),
    };
    if (hit.link) {
      // A page's Link header goes where `finish` puts it, before content-length (pages only leave the one-literal shape).
      delete headers['content-length'];
      headers.link = hit.link;
      headers['content-length'] = String(this.length);
    }
    if (hit.status === 200) headers.etag = hit.etag;
    return (this.h = headers);
  }

  /**
   * The whole response: status line and header lines as `writeHead(status, this.headers)` writes them, then
   * `tail` (what node adds after the caller's headers, ending with the blank line), then the body.
   */
  wire(tail: Uint8Array): Uint8Array {
    const e = this.entry;
    const c = this.client;
    const len =
      e.wireHead.length +
      this.vary.length +
      c.wireLimit.length +
      uintLength(this.remaining) +
      WIRE_RESET.length +
      uintLength(this.reset) +
      c.wirePolicy.length +
      e.wireLength.length +
      uintLength(this.length) +
      e.wireEtag.length +
      tail.length +
      this.length;
    const buf = allocBody(len);
    buf.set(e.wireHead, 0);
    let p = e.wireHead.length;
    buf.set(this.vary, p);
    p += this.vary.length;
    buf.set(c.wireLimit, p);
    p = writeUint(buf, p + c.wireLimit.length, this.remaining);
    buf.set(WIRE_RESET, p);
    p = writeUint(buf, p + WIRE_RESET.length, this.reset);
    buf.set(c.wirePolicy, p);
    p += c.wirePolicy.length;
    buf.set(e.wireLength, p);
    p = writeUint(buf, p + e.wireLength.length, this.length);
    buf.set(e.wireEtag, p);
    p += e.wireEtag.length;
    buf.set(tail, p);
    this.writeBody(buf, p + tail.length);
    return buf;
  }
}
