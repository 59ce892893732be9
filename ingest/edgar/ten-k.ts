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
import { decodeEntities, htmlToText } from './html-text.ts';
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
  /** The registrant's name (iXBRL `dei:EntityRegistrantName`, else the SGML header's filer); signals read it as "the company". */
  company_name: string | null;
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
    if (m && l.length < 220)
      heads.push({
        line: i,
        item: m[1].toUpperCase(),
        title:
          m[2]
            .replace(/\|\s*\d+\s*$/, '')
            .replace(/\|/g, '')
            .trim() ||
          lines[i + 1]?.slice(0, 120) ||
          null,
      });
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

/** A count: "32,439", "2.1 million", "400,000". */
const COUNT = String.raw`(\d[\d,]*(?:\.\d+)?(?:\s+(?:million|thousand))?)`;
/**
 * The company's own total headcount (docs/signal-labelling-rules.md §3). Strong: a verb of having or employing
 * before the count ("we had about 61,400 employees", "employed approximately 99,000 people"); weak: a qualifier
 * only ("our nearly 400,000 employees"), read when no sentence has the strong form (a qualifier alone also
 * introduces sub-groups: "more than 16,000 employees had over 10 years of tenure").
 */
const STAFF = String.raw`(?:active,?\s+)?(?:full[- ]time(?:[- ]equivalent)?\s+|total\s+|regular\s+|global\s+)?(?:employees|team members|associates|colleagues)\b`;
const QUALIFIER = '(?:approximately|about|nearly|almost|over|more than|roughly)';
const EMPLOYEE_STRONG = [
  new RegExp(String.raw`\b(?:had|has|have|employed|employ|employs|a total of)\s+(?:${QUALIFIER}\s+)?${COUNT}\s+${STAFF}`, 'i'),
  new RegExp(String.raw`\b(?:employed|employ|employs)\s+(?:${QUALIFIER}\s+)?${COUNT}\s+(?:people|persons|individuals)\b`, 'i'),
  new RegExp(
    String.raw`\b(?:headcount|workforce)(?:\s+worldwide)?\s+(?:was|of|totaled)\s+(?:${QUALIFIER}\s+)?${COUNT}(?!\d|[,.]\d|\s*(?:percent|%))`,
    'i',
  ),
];
const EMPLOYEE_WEAK = [new RegExp(String.raw`\b(?:${QUALIFIER}|our)\s+${COUNT}\s+${STAFF}`, 'i')];
/** "The Company has no employees" (0); "X is the only employee" (1). */
const NO_EMPLOYEES =
  /\b(?:the (?:company|partnership|registrant|fund|trust)|we|it)\s+(?:currently\s+)?(?:has|had|have|has had)\s+no\s+(?:full[- ]time\s+|paid\s+)?employees\b/i;
const ONE_EMPLOYEE = /\bis (?:our|the|its) (?:only|sole) employee\b/i;

function countValue(s: string): number {
  const m = /^([\d,.]+)\s*(million|thousand)?$/i.exec(s.trim());
  if (!m) return Number.NaN;
  const n = Number(m[1].replace(/,/g, ''));
  return Math.round(m[2] ? n * (m[2].toLowerCase() === 'million' ? 1e6 : 1e3) : n);
}

/**
 * Number of employees: the first sentence of `text` (Item 1 first, then the whole document) that states the
 * company's headcount, "has no employees" (0) or "is the only employee" (1). The sentence is the evidence.
 */
export function findEmployees(text: string): { value: number; evidence: string } | null {
  const sentences = text.split('\n').flatMap((line) => line.split(/(?<=[.;])\s+(?=[A-Z•])/));
  for (const res of [EMPLOYEE_STRONG, EMPLOYEE_WEAK]) {
    for (const sentence of sentences) {
      if (NO_EMPLOYEES.test(sentence)) return { value: 0, evidence: clip(sentence) };
      if (ONE_EMPLOYEE.test(sentence)) return { value: 1, evidence: clip(sentence) };
      for (const re of res) {
        const m = re.exec(sentence);
        if (!m) continue;
        const value = countValue(m[1]);
        if (Number.isInteger(value) && value > 0 && !/^(?:19|20)\d{2}$/.test(m[1])) return { value, evidence: clip(sentence) };
      }
    }
  }
  return null;
}

const clip = (s: string) => (s.trim().length > 280 ? `${s.trim().slice(0, 277)}...` : s.trim());

/** A person's name as 10-Ks print it: 2-5 capitalised words or initials ("V. James Vena", "RICHARD V. McPHAIL", "Alfred F. Kelly, Jr."). */
const NAME = String.raw`((?:[A-Z][A-Za-z'’\-]*\.?|Ma\.)(?:\s+(?:[A-Z][A-Za-z'’\-]*\.?|de|van|von|da)){1,4}(?:,?\s+(?:Jr\.?|JR\.?|Sr\.?|II|III|IV))?)`;
/** Words that make a capitalised phrase a title or heading, not a name. */
const NOT_NAME =
  /\b(?:and|of|the|for|our|chief|officers?|executive|president|vice|senior|director|directors|board|company|inc|corporation|position|positions|age|name|since|table|contents|general|counsel|financial|operating|chair|chairman|item|part|information|business|experience|held|current|principal|secretary|treasurer|controller|marketing|global|risk|legal|human|resources|group|division|segment|former|office|offices|first|elected|years?|annual|report|form|management|none)\b/i;
const isName = (s: string) => !NOT_NAME.test(s) && /[a-z]/i.test(s) && s.split(/\s+/).length >= 2;
/** An age: a two-digit number from 25 to 95. */
const asAge = (s: string | undefined) => {
  const n = Number(s);
  return Number.isInteger(n) && n >= 25 && n <= 95 ? n : null;
};
/** Title case for names printed in capitals ("WILLIAM D. BASTEK" → "William D. Bastek"); mixed case is kept. */
const nameCase = (s: string) =>
  /[a-z]/.test(s)
    ? s
    : s
        .toLowerCase()
        .replace(/(^|[\s\-'’.])([a-z])/g, (_m, a: string, b: string) => a + b.toUpperCase())
        .replace(/\bMc([a-z])/g, (_m, c: string) => `Mc${c.toUpperCase()}`)
        .replace(/\bJr\b/, 'Jr');

/**
 * One executive officer from the lines starting at `lines[j]`, in the layouts 10-Ks use:
 * `Name | Age | Title`, `Name | Title | Age`, a name line followed by its age (and title) on the next lines,
 * `NAME, age 58, has been …`, `Name (age 58)` then the title, `NAME - | Title` then `Mr. X (57) has been …`,
 * and `Name | Business experience … | 2013 | 53`.
 */
function readOfficer(lines: string[], j: number): TenKExecutive | null {
  const l = lines[j];
  let m = new RegExp(String.raw`^${NAME}\s*(?:\{\d+\})?\s*\|\s*(\d{2})\s*(?:\|\s*(.*))?$`).exec(l);
  if (m && isName(m[1]) && asAge(m[2])) return officer(m[1], asAge(m[2]), m[3] ?? lines[j + 1] ?? '');
  m = new RegExp(String.raw`^${NAME}\s*\|\s*([^|]{3,200}?)\s*\|\s*(\d{2})\b`).exec(l);
  if (m && isName(m[1]) && asAge(m[3])) return officer(m[1], asAge(m[3]), m[2]);
  m = new RegExp(
    String.raw`^${NAME},\s+age\s+(\d{2}),\s+(?:has (?:been|served as)|is|currently serves as)\s+(?:our\s+)?([^.;]{3,160})`,
  ).exec(l);
  if (m && isName(m[1]) && asAge(m[2])) return officer(m[1], asAge(m[2]), m[3].replace(/\s+since\b.*$/, ''));
  m = new RegExp(String.raw`^${NAME}\s+\(age\s+(\d{2})\)$`).exec(l);
  if (m && isName(m[1]) && asAge(m[2])) return officer(m[1], asAge(m[2]), (lines[j + 1] ?? '').replace(/\s+(?:since|from)\b.*$/, ''));
  m = new RegExp(String.raw`^${NAME}\s+-\s*\|\s*(.{3,160})$`).exec(l);
  if (m && isName(m[1])) {
    const age = asAge(/^M(?:r|s|rs)\.\s+[A-Z][\w'’\-]+(?:,\s+Jr\.)?\s+\((\d{2})\)/.exec(lines[j + 1] ?? '')?.[1]);
    if (age) return officer(m[1], age, m[2]);
  }
  m = new RegExp(String.raw`^${NAME}\s*\|\s*(.{10,})\|\s*(?:\d{4}|\d{4}\s*\|\s*)?\s*(\d{2})$`).exec(l);
  if (m && isName(m[1])) {
    const age = asAge(/(\d{2})$/.exec(l)?.[1]);
    if (age) return officer(m[1], age, m[2].split(/[.,;]\s|\s\|/)[0]);
  }
  // A name alone on its line; its age (alone, "57 | Title", or "2013 | 53") within the next three lines.
  m = new RegExp(`^${NAME}$`).exec(l);
  if (m && isName(m[1])) {
    for (let k = j + 1; k <= Math.min(j + 3, lines.length - 1); k++) {
      const a = /^(?:(\d{2})|(\d{2})\s*\|\s*(.+)|\d{4}\s*\|\s*(\d{2}))$/.exec(lines[k]);
      if (a) {
        const title = a[3] ?? (a[1] ? (k === j + 1 ? lines[k + 1] : lines[j + 1]) : lines[j + 1]) ?? '';
        const age = asAge(a[1] ?? a[2] ?? a[4]);
        if (age) return officer(m[1], age, k === j + 1 || a[3] ? title : lines[j + 1]);
      }
      if (new RegExp(`^${NAME}`).test(lines[k]) && isName(lines[k].split(/[|,]/)[0].trim())) break;
    }
  }
  return null;
}

function officer(name: string, age: number | null, title: string): TenKExecutive | null {
  const t = title
    .replace(/\s*\|\s*/g, ', ')
    .replace(/\s*\[\d+\]\s*$/, '')
    .trim()
    .slice(0, 200);
  // A director who is not an officer, or a former one, is not an executive officer (rules §3).
  if (/^(?:former\s+)?director$/i.test(t) || /^former\b/i.test(t)) return null;
  return { name: nameCase(name.replace(/\s+/g, ' ').trim()), age, title: t };
}

/**
 * The executive officers the 10-K lists: the lines after an "executive officers" heading (Part I "Information
 * about our Executive Officers" or Part III Item 10), up to the next item or part heading. The first heading
 * whose section yields names wins; a list incorporated by reference from the proxy yields none.
 */
export function findExecutives(text: string): TenKExecutive[] {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // "OFFI CERS": a word broken by markup in some filings (Premier Pacific 2016).
    if (!/executive\s+offi\s?cers/i.test(lines[i]) || lines[i].length > 240) continue;
    const out: TenKExecutive[] = [];
    for (let j = i + 1; j < Math.min(lines.length, i + 130); j++) {
      if (/^(?:ITEM\s*\d|PART\s+I)/i.test(lines[j]) || /^(?:EMPLOYEES|Directors of the Company)$/i.test(lines[j].trim())) break;
      const x = readOfficer(lines, j);
      if (x && !out.some((o) => o.name.toLowerCase() === x.name.toLowerCase())) out.push(x);
    }
    if (out.length) return out;
  }
  return [];
}

const PRODUCT_STOP =
  /^(services|segments|competition|human capital|markets?( and distribution)?|research and development|seasonality|supply|customers|business seasonality|intellectual property)\b/i;

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
      if (l.split(/\s+/).length <= 6 && !/[.:]$/.test(l) && /^[A-Za-z]/.test(l) && !out.some((o) => o.value === l))
        out.push({ value: l, evidence: (lines[j + 1] ?? '').slice(0, 240) });
    }
  }
  if (out.length === 0) {
    const re =
      /\b(?:our|its) (?:products|product lines|platforms|offerings)(?: and services)? (?:include|includes|consist of|such as)\s+([^.;]{5,200})/gi;
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
  const re =
    /\b(?:partner(?:ship|ed|s)? with|collaborat(?:e|es|ed|ion) with|strategic alliance with|joint venture with|agreement with)\s+((?:[A-Z][\w&.\-]*(?: +|, *)?){1,6})/g;
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
export function parseTenK(
  input: Uint8Array | string,
  file: string,
  hints: { cik?: number | null; accession?: string | null } = {},
): ParsedTenK {
  const raw = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  if (!raw.trim()) throw new ParseError('empty 10-K document', { file });
  const header = parseSgmlHeader(raw);
  const docs = splitDocuments(raw);
  const primary = docs.find((d) => d.type && /^10-K/i.test(d.type)) ?? docs[0];
  const text = htmlToText(primary.text);
  const form = header?.form ?? primary.type ?? (/\bFORM\s+10-K(405|T)?\b/i.test(text.slice(0, 8000)) ? '10-K' : null);
  if (!form || !/^10-K/i.test(form)) throw new ParseError(`not a 10-K (form ${form ?? 'unknown'})`, { file });
  const ixCik = /dei:EntityCentralIndexKey"[^>]*>\s*(\d{1,10})\s*</.exec(raw)?.[1];
  const ixName = /dei:EntityRegistrantName"[^>]*>(?:\s*<[^>]+>)*\s*([^<]{2,160}?)\s*</.exec(raw)?.[1];
  const sections = splitItems(text);
  if (!sections.has('1') && !sections.has('7')) throw new ParseError('10-K without recognisable Item 1 or Item 7 headings', { file });
  const item1 = sections.get('1')?.text ?? text;
  const fyEnd = /fiscal year ended\s+([A-Z][a-z]+\s+\d{1,2},\s+\d{4})/i.exec(text.slice(0, 6000))?.[1] ?? null;
  return {
    form: form.toUpperCase(),
    cik: hints.cik ?? (ixCik ? Number(ixCik) : null) ?? header?.entities[0]?.cik ?? null,
    accession: hints.accession ?? header?.accession ?? null,
    fiscal_year_end: fyEnd,
    company_name: ixName ? decodeEntities(ixName) : (header?.entities.find((e) => e.role === 'FILER')?.name ?? null),
    sections,
    employees: findEmployees(item1) ?? findEmployees(text),
    executives: findExecutives(text),
    products: findProducts(item1),
    partnerships: findPartnerships(item1),
  };
}
