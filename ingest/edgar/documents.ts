/**
 * Routing of EDGAR filing documents to their parsers: what a file is (8-K,
 * 10-K, ownership XML, something else) from its own bytes, and which CIK and
 * accession it belongs to from its EDGAR path (`…/{cik}/{accession-no-dashes}/{doc}`,
 * `{cik}_8K_{year}_{accession}.htm`, `{accession}.txt`) when the document does
 * not say so itself.
 */
import { parseSgmlHeader } from './sgml.ts';

export type DocumentKind = '8-K' | '10-K' | 'ownership' | 'other';

export interface PathHints {
  cik: number | null;
  accession: string | null;
  /** A YYYY-MM-DD date in the file name (`aapl-10-k-2024-11-01.html`), a filing-date hint. */
  date: string | null;
  document: string;
}

const dashed = (a: string) => `${a.slice(0, 10)}-${a.slice(10, 12)}-${a.slice(12)}`;

/** CIK, accession and date hints from a relative EDGAR-style path. */
export function pathHints(relPath: string): PathHints {
  const p = relPath.replace(/\\/g, '/');
  const document = p.split('/').pop() ?? p;
  let cik: number | null = null;
  let accession: string | null = null;
  const folder = /(?:^|\/)(\d{1,10})\/(\d{18})\/[^/]+$/.exec(p);
  if (folder) {
    cik = Number(folder[1]);
    accession = dashed(folder[2]);
  }
  const crawler = /^(\d{1,10})_[0-9A-Z-]+_\d{4}_(\d{10}-\d{2}-\d{6})\./.exec(document);
  if (crawler) {
    cik = Number(crawler[1]);
    accession = crawler[2];
  }
  const acc = /(\d{10}-\d{2}-\d{6})/.exec(document);
  if (!accession && acc) accession = acc[1];
  const date = /(?<!\d)((?:19|20)\d{2}-[01]\d-[0-3]\d)(?![\d-])/.exec(document)?.[1] ?? null;
  return { cik, accession, date, document };
}

/** What a document is, from its content. */
export function classifyDocument(text: string): { kind: DocumentKind; form: string | null } {
  if (text.includes('<ownershipDocument')) {
    const t = /<documentType>\s*([^<\s]+)/.exec(text)?.[1] ?? null;
    return { kind: 'ownership', form: t };
  }
  const header = parseSgmlHeader(text);
  const typeTag = /<TYPE>([^\n<]+)/.exec(text.slice(0, 5000))?.[1]?.trim() ?? null;
  // Inline XBRL documents name their form on the cover: <ix:nonNumeric name="dei:DocumentType">10-K</ix:nonNumeric>.
  const ixType = /name="dei:DocumentType"[^>]*>\s*(?:<[^>]+>\s*)*([^<\s][^<]*?)\s*</.exec(text)?.[1] ?? null;
  let form = header?.form ?? typeTag ?? ixType;
  if (!form) {
    const head = text
      .slice(0, 60000)
      .replace(/<[^>]+>/g, ' ')
      .replace(/&nbsp;|&#160;|\s+/gi, ' ');
    const m = /\bFORM\s+(10-K405|10-KT|10-K|8-K|10-Q|20-F|DEF 14A)\b/i.exec(head);
    form = m ? m[1].toUpperCase() : null;
  }
  if (form && /^8-K/i.test(form)) return { kind: '8-K', form };
  if (form && /^10-K/i.test(form)) return { kind: '10-K', form };
  return { kind: 'other', form };
}
