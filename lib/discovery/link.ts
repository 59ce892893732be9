/**
 * Finding `rel="ai-discovery"` links: in an HTML page's `<link>` elements and
 * in HTTP `Link` headers (RFC 8288, parsed by `http-link-header`: several
 * links per header, quoted parameters, space-separated and case-insensitive
 * relation types, relative targets resolved against the response URL).
 */
import LinkHeader from 'http-link-header';

export const AI_DISCOVERY_REL = 'ai-discovery';

export interface LinkCandidate {
  /** Absolute URL of the target. */
  href: string;
  /** The `type` attribute, lower-cased, or null when absent. */
  type: string | null;
  source: 'link-tag' | 'link-header';
}

function parseAttributes(tag: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  const re = /([^\s"'<>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  const inner = tag.replace(/^<\s*link\b/i, '').replace(/\/?>$/, '');
  for (const m of inner.matchAll(re)) {
    const name = m[1].toLowerCase();
    if (!(name in attrs)) attrs[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
}

function decodeEntities(s: string): string {
  return s.replace(
    /&(amp|lt|gt|quot|#39|apos);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" })[e] ?? _,
  );
}

function hasRel(relValue: string | undefined, rel: string): boolean {
  return (relValue ?? '').split(/\s+/).some((t) => t.toLowerCase() === rel);
}

function resolve(href: string, base: string): string | null {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

/**
 * `<link rel="… ai-discovery …" href>` elements of an HTML document's head
 * (the whole document when it has no explicit head), hrefs resolved against
 * `<base href>` or `baseUrl`. Comments and script bodies are ignored.
 */
export function findLinkTags(html: string, baseUrl: string, rel = AI_DISCOVERY_REL): LinkCandidate[] {
  const cleaned = html.replace(/<!--[\s\S]*?-->/g, '').replace(/<script\b[\s\S]*?<\/script\s*>/gi, '');
  const headEnd = cleaned.search(/<\/head\s*>|<body\b/i);
  const head = headEnd >= 0 ? cleaned.slice(0, headEnd) : cleaned;
  const baseTag = /<base\b[^>]*>/i.exec(head);
  const baseHref = baseTag ? parseAttributes(baseTag[0].replace(/^<\s*base/i, '<link')).href : undefined;
  const base = (baseHref && resolve(baseHref, baseUrl)) || baseUrl;
  const out: LinkCandidate[] = [];
  for (const m of head.matchAll(/<link\b[^>]*>/gi)) {
    const a = parseAttributes(m[0]);
    if (!hasRel(a.rel, rel) || !a.href) continue;
    const href = resolve(a.href, base);
    if (href) out.push({ href, type: a.type ? a.type.toLowerCase().trim() : null, source: 'link-tag' });
  }
  return out;
}

/** Links with relation `rel` in the `Link` header(s) of a response, targets resolved against `baseUrl`. Malformed headers yield no links. */
export function findLinkHeaders(headers: Headers, baseUrl: string, rel = AI_DISCOVERY_REL): LinkCandidate[] {
  const raw = headers.get('link');
  if (!raw) return [];
  let parsed: LinkHeader;
  try {
    parsed = LinkHeader.parse(raw);
  } catch {
    return [];
  }
  const out: LinkCandidate[] = [];
  for (const ref of parsed.rel(rel)) {
    const href = resolve(ref.uri, baseUrl);
    if (href && !out.some((o) => o.href === href))
      out.push({ href, type: typeof ref.type === 'string' ? ref.type.toLowerCase().trim() : null, source: 'link-header' });
  }
  return out;
}

/** True when a declared media type can carry the manifest (absent counts as possible; the body decides). */
export function isJsonType(type: string | null): boolean {
  if (type === null) return true;
  const t = type.split(';')[0].trim();
  return t === 'application/json' || t.endsWith('+json');
}
