/**
 * 10-K text: item sections (the Table of Contents lists every heading once, so
 * each item's section is the occurrence with the longest body), employees
 * (Item 1, "Human Capital"), the "Information About Our Executive Officers"
 * table (Name | Age | Position), products (short headings under a "Products"
 * heading, or "our products include …" sentences) and partnerships
 * (sentences naming a partner/collaboration) for the profile. Signals run on
 * Items 1A and 7 (see signals.ts).
 */
import { ParseError } from '../../lib/errors.ts';
import { htmlToText } from './html-text.ts';
import { parseSgmlHeader, splitDocuments } from './sgml.ts';

export interface TenKSection {
  item: string;
  title: string | null;
  text: string;
}

export interface TenKExecutive {
  name: string;
  age: number | null;
  title: string;
}

export interface ParsedTenK {
  form: string;
  cik: number | null;
  accession: string | null;
  fiscal_year_end: string | null;
  sections: Map<string, TenKSection>;
  employees: { value: number; evidence: string } | null;
  executives: TenKExecutive[];
  products: Array<{ value: string; evidence: string }>;
  partnerships: Array<{ value: string; evidence: string }>;
}

const HEADING = /^ITEM\s*(1A|1B|1C|1|2|3|4|5|6|7A|7|8|9A|9B|9C|9|10|11|12|13|14|15|16)\s*[.:\-–—|]?\s*(.*)$/i;

/** Splits 10-K text into item sections. */
export function splitItems(text: string): Map<string, TenKSection> {
  const lines = text.split('\n');
  const heads: Array<{ line: number; item: string; title: string | null }> = [];
  lines.forEach((l, i) => {
    const m = HEADING.exec(l);
    if (m && l.length < 220) heads.push({ line: i, item: m[1].toUpperCase(), title: m[2].replace(/\|\s*\d+\s*$/, '').replace(/\|/g, '').trim() || lines[i + 1]?.slice(0, 120) || null });
  });
  const best = new Map<string, { start: number; end: number; title: string | null; size: number }>();
  for (let k = 0; k < heads.length; k++) {
    const h = heads[k];
    const end = k + 1 < heads.length ? heads[k + 1].line : lines.length;
    const size = lines.slice(h.line + 1, end).reduce((a, l) => a + l.length, 0);
    const prev = best.get(h.item);
    if (!prev || size > prev.size) best.set(h.item, { start: h.line + 1, end, title: h.title, size });
  }
  const out = new Map<string, TenKSection>();
  for (const [item, b] of best) out.set(item, { item, title: b.title, text: lines.slice(b.start, b.end).join('\n') });
  return out;
}

const EMPLOYEE_RES = [
  /(?:approximately|about|had|employed|employ|of)\s+([\d,]{3,})\s+(?:full[- ]time(?:[- ]equivalent)?\s+|total\s+|regular\s+)?(?:employees|people|team members|associates|individuals)/i,
  /(?:headcount|workforce)(?:\s+worldwide)?\s+(?:was|of|totaled)\s+(?:approximately\s+)?([\d,]{3,})/i,
];

/** Number of employees stated in Item 1 (or anywhere when Item 1 is missing). */
export function findEmployees(text: string): { value: number; evidence: string } | null {
  for (const re of EMPLOYEE_RES) {
    const m = re.exec(text);
    if (m) {
      const value = Number(m[1].replace(/,/g, ''));
      if (value > 0) return { value, evidence: sentenceAround(text, m.index) };
    }
  }
  return null;
}

/** Rows of the executive-officers table after an "Executive Officers" heading. */
export function findExecutives(text: string): TenKExecutive[] {
  const lines = text.split('\n');
  const out: TenKExecutive[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/executive officers/i.test(lines[i]) || lines[i].length > 200) continue;
    for (let j = i + 1; j < Math.min(lines.length, i + 40); j++) {
      const m = /^([A-Z][A-Za-z.'’\- ]{2,60}?)\s*\|\s*(\d{2})\s*\|\s*(.{3,200})$/.exec(lines[j]);
      if (m) out.push({ name: m[1].trim(), age: Number(m[2]), title: m[3].replace(/\s*\|\s*/g, ', ').trim() });
      else if (out.length && !/^Name\b/.test(lines[j])) break;
    }
    if (out.length) break;
  }
  return out;
}

const PRODUCT_STOP = /^(services|segments|competition|human capital|markets?( and distribution)?|research and development|seasonality|supply|customers|business seasonality|intellectual property)\b/i;

/** Products: short headings under a "Products" heading, else "our products include …" clauses. */
export function findProducts(item1: string): Array<{ value: string; evidence: string }> {
  const lines = item1.split('\n');
  const out: Array<{ value: string; evidence: string }> = [];
  const start = lines.findIndex((l) => /^(our )?products( and services)?$/i.test(l.trim()));
  if (start >= 0) {
    for (let j = start + 1; j < lines.length && out.length < 12; j++) {
      const l = lines[j].trim();
      if (PRODUCT_STOP.test(l)) break;
      if (/table of contents|^\d+$/i.test(l)) continue;
      if (l.split(/\s+/).length <= 6 && !/[.:]$/.test(l) && /^[A-Za-z]/.test(l) && !out.some((o) => o.value === l)) out.push({ value: l, evidence: (lines[j + 1] ?? '').slice(0, 240) });
    }
  }
  if (out.length === 0) {
    const re = /\b(?:our|its) (?:products|product lines|platforms|offerings)(?: and services)? (?:include|includes|consist of|such as)\s+([^.;]{5,200})/gi;
    for (const m of item1.matchAll(re)) {
      if (out.length >= 8) break;
      out.push({ value: m[1].trim(), evidence: sentenceAround(item1, m.index) });
    }
  }
  return out;
}

/** Partnerships: sentences that name a partnership, collaboration, alliance or joint venture with a named party. */
export function findPartnerships(item1: string): Array<{ value: string; evidence: string }> {
  const out: Array<{ value: string; evidence: string }> = [];
  const re = /\b(?:partner(?:ship|ed|s)? with|collaborat(?:e|es|ed|ion) with|strategic alliance with|joint venture with|agreement with)\s+((?:[A-Z][\w&.\-]*(?: +|, *)?){1,6})/g;
  const seen = new Set<string>();
  for (const m of item1.matchAll(re)) {
    const value = m[1].replace(/[,\s]+$/, '').trim();
    if (!value || seen.has(value) || /^(The|Our|We|Company)$/.test(value)) continue;
    seen.add(value);
    out.push({ value, evidence: sentenceAround(item1, m.index) });
    if (out.length >= 8) break;
  }
  return out;
}

/** The sentence containing offset `at`, trimmed to ≤ 280 chars. */
export function sentenceAround(text: string, at: number): string {
  const startLine = text.lastIndexOf('\n', at) + 1;
  const endLine = text.indexOf('\n', at);
  const line = text.slice(startLine, endLine < 0 ? undefined : endLine);
  const rel = at - startLine;
  const before = line.slice(0, rel);
  const dot = before.lastIndexOf('. ');
  const s = dot < 0 ? 0 : dot + 2;
  const after = line.slice(rel);
  const e = after.search(/\.(\s|$)/);
  const sentence = line.slice(s, e < 0 ? undefined : rel + e + 1).trim();
  return sentence.length > 280 ? `${sentence.slice(0, 277)}...` : sentence;
}

/** Parses a 10-K (or 10-K405/10-KT) document: primary .htm, a 1999 HTML file, or a complete .txt submission. */
export function parseTenK(input: Uint8Array | string, file: string, hints: { cik?: number | null; accession?: string | null } = {}): ParsedTenK {
  const raw = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  if (!raw.trim()) throw new ParseError('empty 10-K document', { file });
  const header = parseSgmlHeader(raw);
  const docs = splitDocuments(raw);
  const primary = docs.find((d) => d.type && /^10-K/i.test(d.type)) ?? docs[0];
  const text = htmlToText(primary.text);
  const form = header?.form ?? primary.type ?? (/\bFORM\s+10-K(405|T)?\b/i.test(text.slice(0, 8000)) ? '10-K' : null);
  if (!form || !/^10-K/i.test(form)) throw new ParseError(`not a 10-K (form ${form ?? 'unknown'})`, { file });
  const ixCik = /dei:EntityCentralIndexKey"[^>]*>\s*(\d{1,10})\s*</.exec(raw)?.[1];
  const sections = splitItems(text);
  if (!sections.has('1') && !sections.has('7')) throw new ParseError('10-K without recognisable Item 1 or Item 7 headings', { file });
  const item1 = sections.get('1')?.text ?? text;
  const fyEnd = /fiscal year ended\s+([A-Z][a-z]+\s+\d{1,2},\s+\d{4})/i.exec(text.slice(0, 6000))?.[1] ?? null;
  return {
    form: form.toUpperCase(),
    cik: hints.cik ?? (ixCik ? Number(ixCik) : null) ?? header?.entities[0]?.cik ?? null,
    accession: hints.accession ?? header?.accession ?? null,
    fiscal_year_end: fyEnd,
    sections,
    employees: findEmployees(item1) ?? findEmployees(text),
    executives: findExecutives(item1).length ? findExecutives(item1) : findExecutives(text),
    products: findProducts(item1),
    partnerships: findPartnerships(item1),
  };
}
