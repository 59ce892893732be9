/**
 * The ai-discovery link on HTML: `withDiscoveryLink(html)` puts
 * `<link rel="ai-discovery" type="application/json" href="/.well-known/ai">`
 * in a page's head (every family serving HTML calls it), and
 * `registerDiscoveryLinkHeader(app)` adds
 * `Link: </.well-known/ai>; rel="ai-discovery"; type="application/json"` to
 * every HTML response (HEAD included), whatever family produced it.
 */
import type { H3 } from 'h3';

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

/** Global middleware: every response whose Content-Type is HTML gets the ai-discovery Link header. */
export function registerDiscoveryLinkHeader(app: H3): void {
  app.use(async (event, next) => {
    const result = await next();
    const ct = result instanceof Response ? result.headers.get('content-type') : event.res.headers.get('content-type');
    if (ct && /^\s*(text\/html|application\/xhtml\+xml)/i.test(ct)) {
      const existing = (result instanceof Response ? result.headers.get('link') : null) ?? event.res.headers.get('link') ?? '';
      if (!/rel="?ai-discovery/i.test(existing)) event.res.headers.append('link', DISCOVERY_LINK_HEADER);
    }
    return result;
  });
}
