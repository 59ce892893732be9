/**
 * The cross-cutting HTTP layer, one h3 middleware applied to every route:
 *
 * - /api/*: metering (metering.ts): identity, hourly limit, usage_meta,
 *   RateLimit headers, one query-log row; an unknown or revoked key is a 401.
 *   /api/health and /api/ready are never metered (UNMETERED_PATHS).
 * - Hot cache: 200 and 404 bodies of snapshot-determined GET routes
 *   (CACHEABLE_PREFIXES) are served from memory (hot-path.ts); the cache is
 *   dropped on every snapshot swap.
 * - Conditional GET, compression and CORS for GET/HEAD, OPTIONS preflights
 *   (response-finish.ts); `/mcp` is left to its own origin policy.
 * - Unknown /api paths answer the same `{error, status}` 404 shape as the rest.
 * - A POST with `Idempotency-Key` is answered once per key, client and path;
 *   a retry gets the first answer again (idempotency.ts).
 */
import { withMembers } from '../../lib/objects.ts';
import { createHash } from 'node:crypto';
import type { H3, H3Event } from 'h3';
import type { ServiceDeps } from './deps.ts';
import { ApiLayer } from './hot-path.ts';
import { errorResponse } from './http.ts';
import { answerIdempotently, checkIdempotencyKey } from './idempotency.ts';
import { meteredHeaders, meterRequest, usageMetaText } from './metering.ts';
import { etagOf, isCacheable, type CachedResponse } from './response-cache.ts';
import {
  compressText,
  CORS_HEADERS,
  finish,
  JSON_TYPE,
  jsonTextOf,
  mergeUsageMeta,
  onlyContentType,
  PREFLIGHT_HEADERS,
  toFastResponse,
  type LayerRequest,
  type ResponseBody,
} from './response-finish.ts';
import { isWarmupRequest } from './warmup.ts';
import { preparedDocumentOf } from './prepared-document.ts';

/** Non-/api documents that get ETag, compression and CORS (no metering). */
const DOCUMENT_PATHS = new Set(['/openapi.json', '/docs', '/docs/rules', '/.well-known/proofline-keys.json']);

/** /api routes that are never metered: probes every few seconds must not spend a client's limit, nor wait on Redis (issue 21 item 4). */
export const UNMETERED_PATHS = new Set(['/api/health', '/api/ready']);

const kNotFound = Symbol.for('h3.notFound');

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
    if (ct.includes('json'))
      return {
        status: val.status,
        json: jsonTextOf(val) ?? (await val.text()),
        raw: null,
        contentType: ct,
        headers: val.headers,
        ticker: val.status < 300 ? tickerOf(pathname, null) : null,
      };
    return { status: val.status, json: null, raw: val.body, contentType: ct, headers: val.headers, ticker: null };
  }
  if (typeof val === 'string')
    return { status: event.res.status ?? 200, json: null, raw: val, contentType: 'text/plain; charset=utf-8', headers: null, ticker: null };
  if (val instanceof Uint8Array || val instanceof ReadableStream || val instanceof Blob) {
    return {
      status: event.res.status ?? 200,
      json: null,
      raw: val as ResponseBody,
      contentType: 'application/octet-stream',
      headers: null,
      ticker: null,
    };
  }
  try {
    return {
      status: event.res.status ?? 200,
      json: JSON.stringify(val),
      raw: null,
      contentType: JSON_TYPE,
      headers: null,
      ticker: tickerOf(pathname, val),
    };
  } catch (e) {
    return toOutcome(event, errorResponse(e, deps.log), pathname, deps);
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
 * The ETag and compressed bytes of the documents (DOCUMENT_PATHS), kept per
 * path while the document's text stays the same: `/openapi.json` is 344 KB,
 * whose SHA-1 and brotli took most of each request. A changed text (another
 * snapshot's counts, another key) replaces the entry.
 */
class DocumentMemo {
  private readonly entries = new Map<string, { body: string; etag: string; encoded: Map<string, Uint8Array> }>();

  of(pathname: string, body: string): { etag: string; compress: (enc: 'br' | 'gzip', text: string) => Uint8Array } {
    let e = this.entries.get(pathname);
    if (!e || e.body !== body) {
      e = { body, etag: etagOf(body), encoded: new Map() };
      this.entries.set(pathname, e);
    }
    const entry = e;
    return {
      etag: entry.etag,
      compress: (enc, text) => {
        let bytes = entry.encoded.get(enc);
        if (!bytes) entry.encoded.set(enc, (bytes = compressText(enc, text)));
        return bytes;
      },
    };
  }
}

/**
 * Runs a POST once per Idempotency-Key (scope: the request's credential and
 * path): JSON answers below 500 are kept and replayed with
 * `Idempotent-Replayed: true`; anything else is answered as is.
 */
async function runIdempotently(
  event: H3Event,
  deps: ServiceDeps,
  rawKey: string,
  pathname: string,
  run: () => Promise<Outcome>,
  headers: Record<string, string>,
): Promise<Outcome> {
  let outcome: Outcome | null = null;
  try {
    const key = checkIdempotencyKey(rawKey);
    // The body is read from a clone: the handler still reads the original.
    const body = await event.req.clone().text();
    const credential = createHash('sha256')
      .update(event.req.headers.get('authorization') ?? '')
      .digest('hex');
    const { answer, replayed } = await answerIdempotently(deps.state!, `${credential} POST ${pathname}`, key, body, deps.now, async () => {
      outcome = await run();
      return outcome.json !== null ? { status: outcome.status, contentType: outcome.contentType, json: outcome.json } : null;
    });
    if (replayed && answer) {
      headers['idempotent-replayed'] = 'true';
      return { status: answer.status, json: answer.json, raw: null, contentType: answer.contentType, headers: null, ticker: null };
    }
    return outcome ?? run();
  } catch (e) {
    // A failure of the key's own bookkeeping (bad key, in flight, database down) after the handler ran keeps its answer.
    return outcome ?? toOutcome(event, errorResponse(e, deps.log), pathname, deps);
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
  const documents = new DocumentMemo();

  app.use(async (event, next) => {
    // The process's own warm-up requests (warmup.ts) are answered unmetered, uncached and unlogged.
    if (isWarmupRequest(event.req)) return next();
    const pathname = event.url.pathname;
    const method = event.req.method;
    if (pathname.startsWith('/mcp')) return next();
    if (method === 'OPTIONS') return toFastResponse({ status: 204, headers: { ...PREFLIGHT_HEADERS }, body: null });
    const isApi = pathname.startsWith('/api/') || pathname === '/api';
    if (UNMETERED_PATHS.has(pathname)) return next();
    const req = new EventLayerRequest(event);
    if (!isApi) {
      if (!DOCUMENT_PATHS.has(pathname) || (method !== 'GET' && method !== 'HEAD')) return next();
      const val = await next();
      const prepared = preparedDocumentOf(val);
      if (prepared) {
        // Finished from the document's own bytes, ETag and compressed forms: the same answer as below, without
        // decoding, comparing and encoding the text again (prepared-document.ts; its response has no header but the
        // content type, so there are no extra headers to merge).
        const res = val as Response;
        const headers: Record<string, string> = withMembers(CORS_HEADERS, {
          'content-type': prepared.contentType,
          'cache-control': 'public, max-age=300',
        });
        return toFastResponse(finish(req, res.status, prepared.text, headers, prepared.etag, null, prepared.compressed, prepared.bytes));
      }
      const out = await toOutcome(event, val, pathname, deps);
      const body = out.json ?? out.raw;
      const headers: Record<string, string> = withMembers(CORS_HEADERS, {
        'content-type': out.contentType,
        'cache-control': 'public, max-age=300',
      });
      if (typeof body !== 'string') return toFastResponse(finish(req, out.status, body, headers, null, out.headers));
      const doc = documents.of(pathname, body);
      return toFastResponse(finish(req, out.status, body, headers, doc.etag, out.headers, doc.compress));
    }

    await layer.getUsage();
    const hot = layer.answerFromCache(req);
    if (hot) return toFastResponse(await hot);

    const t0 = performance.now();
    const usage = await layer.getUsage();
    const metered = await meterRequest(deps, usage, req, t0);
    if (!('id' in metered)) return toFastResponse(metered);
    const { id, m } = metered;
    const headers = meteredHeaders(m);
    const metaJson = usageMetaText(deps, usage, id, m, pathname);

    const cacheable = (method === 'GET' || method === 'HEAD') && isCacheable(pathname);
    const key = cacheable ? pathname + event.url.search : '';
    // A GET was looked up by answerFromCache already (and missed); a HEAD may still hit.
    let hit: CachedResponse | undefined = cacheable && method === 'HEAD' ? cache.get(key) : undefined;
    let out: Outcome;
    if (hit) {
      headers['x-proofline-cache'] = 'hit';
      if (hit.link) headers.link = hit.link;
      out = { status: hit.status, json: hit.json, raw: null, contentType: hit.contentType, headers: null, ticker: hit.ticker };
    } else {
      const gen = cache.generation;
      const run = async (): Promise<Outcome> => {
        let val: unknown;
        try {
          val = await next();
        } catch (e) {
          val = errorResponse(e, deps.log);
        }
        return toOutcome(event, val, pathname, deps);
      };
      const idemKey = method === 'POST' && deps.state ? req.header('idempotency-key') : null;
      out = idemKey !== null ? await runIdempotently(event, deps, idemKey, pathname, run, headers) : await run();
      if (cacheable) {
        headers['x-proofline-cache'] = 'miss';
        // 404s of these routes depend only on the snapshot too (unknown ticker, person): cached alike, never with an ETag.
        // A page keeps its Link header (pagination.ts); it is the one header besides the content type an entry keeps.
        if (out.json !== null && (out.status === 200 || (out.status === 404 && onlyContentType(out.headers)))) {
          hit = {
            status: out.status,
            json: out.json,
            etag: etagOf(out.json),
            ticker: out.status === 200 ? out.ticker : null,
            contentType: out.contentType,
            link: out.headers?.get('link') ?? null,
            hot: null,
          };
          cache.set(key, hit, gen);
        }
      }
    }
    headers['content-type'] = out.contentType;
    if (out.status === 503 && !headers['retry-after']) headers['retry-after'] = '5';
    // Logged at the time of logging, not `nowMs` (QueryLogEntry.ts_ms): the route ran in between.
    usage.record({
      ts_ms: deps.now().getTime(),
      client: id.client,
      tier: id.tier,
      agent_type: id.agent_type,
      method,
      path: pathname,
      ticker: out.ticker,
      status: out.status,
      duration_ms: performance.now() - t0,
    });
    if (out.json === null) return toFastResponse(finish(req, out.status, out.raw, headers, null, out.headers));
    const etag = out.status === 200 && method !== 'POST' ? (hit?.etag ?? etagOf(out.json)) : null;
    return toFastResponse(finish(req, out.status, mergeUsageMeta(out.json, metaJson), headers, etag, out.headers));
  });
  return layer;
}
