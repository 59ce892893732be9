/**
 * The ai-discovery link on HTML: `withDiscoveryLink(html)` puts
 * `<link rel="ai-discovery" type="application/json" href="/.well-known/ai">`
 * in a page's head (every family serving HTML calls it), and
 * `registerDiscoveryLinkHeader(app)` adds
 * `Link: </.well-known/ai>; rel="ai-discovery"; type="application/json"` to
 * every HTML response (HEAD included), whatever family produced it.
 */
import type { H3 } from 'h3';
import { jsonTextOf, layerResponseOf } from './response-finish.ts';

export const DISCOVERY_LINK_TAG = '<link rel="ai-discovery" type="application/json" href="/.well-known/ai">';
export const DISCOVERY_LINK_HEADER = '</.well-known/ai>; rel="ai-discovery"; type="application/json"';

/** Returns `html` with the ai-discovery link tag in its head (unchanged when one is already there). */
export function withDiscoveryLink(html: string): string {
  if (/<link\b[^>]*\brel\s*=\s*["']?[^"'>]*\bai-discovery\b/i.test(html)) return html;
  if (/<\/head\s*>/i.test(html)) return html.replace(/<\/head\s*>/i, `${DISCOVERY_LINK_TAG}\n$&`);
  if (/<head\b[^>]*>/i.test(html)) return html.replace(/<head\b[^>]*>/i, `$&\n${DISCOVERY_LINK_TAG}`);
  if (/<html\b[^>]*>/i.test(html)) return html.replace(/<html\b[^>]*>/i, `$&\n<head>${DISCOVERY_LINK_TAG}</head>`);
  return `<head>${DISCOVERY_LINK_TAG}</head>\n${html}`;
}

/** h3's slots of an event's response headers (Symbol.for keys of h3 v2, as api-middleware.ts reads `h3.notFound`). */
const kEventRes = Symbol.for('h3.internal.event.res');
const kEventResHeaders = Symbol.for('h3.internal.event.res.headers');

/**
 * The content type a route's value will be answered with, read without building a `Headers` object where the value
 * carries plain headers: a layer answer (response-finish.ts `toFastResponse`) its header object, a JSON text answer
 * (`jsonTextResponse`) none of interest (JSON, never HTML), any other value the headers the route set on the event,
 * if it set any. Asking `result.headers` or `event.res.headers` built a Headers object (and an empty one on the
 * event) for every request of every route, HTML or not (issue 22: allocation per request, hence young-GC pauses).
 */
function contentTypeOf(event: object, result: unknown): string | null {
  if (result instanceof Response) {
    const done = layerResponseOf(result);
    if (done) return done.headers['content-type'] ?? null;
    if (jsonTextOf(result) !== undefined) return null;
    return result.headers.get('content-type');
  }
  const res = (event as Record<symbol, Record<symbol, Headers | undefined> | undefined>)[kEventRes];
  return res?.[kEventResHeaders]?.get('content-type') ?? null;
}

/** Global middleware: every response whose Content-Type is HTML gets the ai-discovery Link header. */
export function registerDiscoveryLinkHeader(app: H3): void {
  app.use(async (event, next) => {
    const result = await next();
    const ct = contentTypeOf(event, result);
    if (ct && /^\s*(text\/html|application\/xhtml\+xml)/i.test(ct)) {
      const existing = (result instanceof Response ? result.headers.get('link') : null) ?? event.res.headers.get('link') ?? '';
      if (!/rel="?ai-discovery/i.test(existing)) event.res.headers.append('link', DISCOVERY_LINK_HEADER);
    }
    return result;
  });
}
