/**
 * Response finishing, shared by the middleware and the hot path: conditional
 * GET (a weak ETag over the body without usage_meta, which varies per request;
 * a matching `If-None-Match` → 304), compression (brotli or gzip by
 * Accept-Encoding for bodies of 1 KiB or more), CORS headers, and the plain
 * `LayerResponse` form that srvx and the node:http listener write directly.
 */
import { STATUS_CODES } from 'node:http';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { FastResponse } from 'srvx';
import type { UsageService } from './usage.service.ts';

export const COMPRESS_MIN_BYTES = 1024;
export const JSON_TYPE = 'application/json; charset=utf-8';
export const EXPOSE_HEADERS =
  'ETag, Link, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After, X-Proofline-Cache';
export const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSE_HEADERS,
};
export const PREFLIGHT_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': 'Authorization, If-None-Match, Content-Type',
  'access-control-max-age': '86400',
};
export type ResponseBody = ConstructorParameters<typeof Response>[0];

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

/** True when a handler's headers carry nothing a cached copy would lose (content-type is kept with the entry). */
export function onlyContentType(h: Headers | null): boolean {
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

/** What answers a metered GET from the hot cache, or null to run the full route (hot-path.ts's ApiLayer). */
export interface HotAnswerer {
  answerFromCache(req: LayerRequest): LayerResponse | Promise<LayerResponse> | null;
  /** The usage service the layer meters with (created in memory when main.ts built none): every door meters through it. */
  getUsage(): Promise<UsageService> | UsageService;
}

/** A finished response: status, plain header object (lower-case names), body. */
export interface LayerResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array | ReadableStream | Blob | null;
}

/** `body` compressed with `enc` (brotli at quality 4: most of the gain for a fraction of the CPU of the default 11). */
export function compressText(enc: 'br' | 'gzip', body: string): Uint8Array {
  const bytes = enc === 'br' ? brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } }) : gzipSync(body);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The final response: conditional GET, compression (`compress`, by default
 * done anew), headers. Returned as a plain object so it can be written by srvx
 * (as a FastResponse over a plain header object, which srvx writes straight to
 * the socket) or directly by the node:http hot path.
 */
export function finish(
  req: LayerRequest,
  status: number,
  body: string | ResponseBody | null,
  headers: Record<string, string>,
  etag: string | null,
  extra: Headers | null,
  compress: (enc: 'br' | 'gzip', body: string) => Uint8Array = compressText,
  /** `body` (a string) already encoded as UTF-8, sent instead of encoding it again (prepared-document.ts). */
  utf8?: Uint8Array,
): LayerResponse {
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
      const bytes = compress(enc, body);
      headers['content-length'] = String(bytes.byteLength);
      if (tagged) headers.etag = etag;
      return { status, headers, body: bytes };
    }
  }
  // The length is a header of its own (not left to the transport): a HEAD answer, rebuilt by h3 without its body, keeps it.
  if (typeof body === 'string' && utf8) {
    headers['content-length'] = String(utf8.byteLength);
    if (tagged) headers.etag = etag;
    return { status, headers, body: utf8 };
  }
  if (typeof body === 'string') headers['content-length'] = String(Buffer.byteLength(body));
  else if (body instanceof Uint8Array) headers['content-length'] = String(body.byteLength);
  if (tagged) headers.etag = etag;
  return { status, headers, body: body as LayerResponse['body'] };
}

const kJsonText = Symbol('proofline.jsonText');

/**
 * A JSON answer a route built as text (pagination.ts `pagedResponse`): a srvx FastResponse, which builds no web body
 * stream unless its body is read, keeping its text, so the API layer takes the text as is (`jsonTextOf`) instead of
 * reading the body back (issue 22: the Response and its read-back were a fifth of a warm /api/search request).
 */
export function jsonTextResponse(json: string, init: { status: number; headers: Record<string, string> }): Response {
  const res = new FastResponse(json, init) as unknown as Response;
  (res as unknown as Record<symbol, string>)[kJsonText] = json;
  return res;
}

/** The text of a jsonTextResponse (its body, unread), or undefined for any other Response. */
export function jsonTextOf(res: Response): string | undefined {
  return (res as unknown as Record<symbol, string | undefined>)[kJsonText];
}

const kLayerResponse = Symbol('proofline.layerResponse');

/**
 * The Response h3 returns for an answer this layer finished; it keeps the
 * plain form (`layerResponseOf`) so the node:http listener writes it the way
 * it writes a hot answer (service/platform/node-listener.ts). The status text is the
 * standard reason phrase (srvx would send an empty one).
 */
export function toFastResponse(r: LayerResponse): Response {
  const res = new FastResponse(r.body as ResponseBody, { status: r.status, statusText: STATUS_CODES[r.status], headers: r.headers });
  (res as unknown as Record<symbol, LayerResponse>)[kLayerResponse] = r;
  return res;
}

/** The finished answer behind a Response of this layer, or undefined for any other Response. */
export function layerResponseOf(res: Response): LayerResponse | undefined {
  return (res as unknown as Record<symbol, LayerResponse | undefined>)[kLayerResponse];
}
