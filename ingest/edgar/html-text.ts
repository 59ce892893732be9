/**
 * Plain text of an EDGAR HTML/iXBRL document, good enough for item and section
 * detection: hidden iXBRL headers, scripts and styles dropped; block elements
 * become line breaks; table cells are joined with ` | ` so a row of an
 * executive-officers table stays on one line; entities decoded; whitespace
 * collapsed per line. Plain-text documents (pre-2001 filings) pass through.
 */

const NAMED: Record<string, string> = {
  nbsp: ' ',
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  rsquo: '’',
  lsquo: '‘',
  rdquo: '”',
  ldquo: '“',
  mdash: '—',
  ndash: '–',
  bull: '•',
  middot: '·',
  reg: '®',
  trade: '™',
  copy: '©',
  sect: '§',
  hellip: '…',
  zwsp: '',
};

/** Decodes HTML character references (named, decimal, hex). */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? (code === 160 ? ' ' : String.fromCodePoint(code)) : m;
    }
    const v = NAMED[e.toLowerCase()];
    return v ?? m;
  });
}

/**
 * True when the text looks like HTML rather than a plain-text filing. `<TABLE>` alone is not HTML: plain-text
 * EDGAR filings of the 1990s mark their tables with `<TABLE>`/`<CAPTION>`/`<S>`/`<C>` (EDGAR Filer Manual), and
 * reading them as HTML joined every line of a table block into one.
 */
export function looksLikeHtml(s: string): boolean {
  return /<(html|body|div|p|td|br|font)\b/i.test(s.slice(0, 20000));
}

/** Converts an HTML document (or a plain-text one) to normalised lines of text. */
export function htmlToText(html: string): string {
  if (!looksLikeHtml(html)) return normaliseLines(html.replace(/<[^>\n]{1,40}>/g, ' '));
  let s = html
    .replace(/<ix:header>[\s\S]*?<\/ix:header>/gi, ' ')
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    // Source line breaks inside HTML are not text breaks (older filings hard-wrap paragraphs).
    .replace(/\s+/g, ' ');
  s = s
    .replace(/<\/(td|th)\s*>/gi, ' | ')
    .replace(/<(br|hr)\b[^>]*>/gi, '\n')
    .replace(/<\/?(p|div|tr|li|h[1-6]|table|ul|ol|center|section|article)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, '');
  return normaliseLines(decodeEntities(s));
}

function normaliseLines(s: string): string {
  const out: string[] = [];
  for (const raw of s.split(/\r?\n/)) {
    let line = raw.replace(/[\t\u00a0\u2009\u200b ]+/g, ' ').trim();
    line = line
      .replace(/^(\|\s*)+/, '')
      .replace(/(\s*\|)+$/, '')
      .replace(/(\|\s*){2,}/g, '| ')
      .trim();
    if (line) out.push(line);
  }
  return out.join('\n');
}
