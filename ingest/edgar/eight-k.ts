/**
 * 8-K documents (primary `.htm`, edgar-crawler `.htm` with a `<DOCUMENT>`
 * wrapper, and complete `.txt` submissions) into item rows and timeline events.
 *
 * Items are read from the document's own `Item N.NN` headings (and, for
 * complete submissions, the SGML `ITEM INFORMATION` titles). Filings before
 * 23 Aug 2004 used Items 1-12; they are mapped onto today's numbers
 * (SEC Release 33-8400): 1→5.01, 2→2.01, 3→1.03, 4→4.01, 5→8.01, 6→5.02,
 * 7→9.01, 8→5.03, 9→7.01, 10→5.05, 11→5.04, 12→2.02.
 */
import { ParseError } from '../../lib/errors.ts';
import { htmlToText } from './html-text.ts';
import { parseSgmlHeader, splitDocuments, type SgmlHeader } from './sgml.ts';

/** Today's 8-K items: title and the timeline event type each one becomes. */
export const EIGHT_K_ITEMS: Record<string, { title: string; event: string }> = {
  '1.01': { title: 'Entry into a Material Definitive Agreement', event: 'material_agreement' },
  '1.02': { title: 'Termination of a Material Definitive Agreement', event: 'material_agreement' },
  '1.03': { title: 'Bankruptcy or Receivership', event: 'bankruptcy' },
  '1.05': { title: 'Material Cybersecurity Incidents', event: 'cybersecurity_incident' },
  '2.01': { title: 'Completion of Acquisition or Disposition of Assets', event: 'acquisition' },
  '2.02': { title: 'Results of Operations and Financial Condition', event: 'financial_results' },
  '2.03': { title: 'Creation of a Direct Financial Obligation', event: 'financing' },
  '2.05': { title: 'Costs Associated with Exit or Disposal Activities', event: 'restructuring' },
  '2.06': { title: 'Material Impairments', event: 'impairment' },
  '3.01': { title: 'Notice of Delisting or Failure to Satisfy a Continued Listing Rule', event: 'delisting_notice' },
  '3.02': { title: 'Unregistered Sales of Equity Securities', event: 'financing' },
  '3.03': { title: 'Material Modification to Rights of Security Holders', event: 'governance' },
  '4.01': { title: "Changes in Registrant's Certifying Accountant", event: 'auditor_change' },
  '4.02': { title: 'Non-Reliance on Previously Issued Financial Statements', event: 'restatement' },
  '5.01': { title: 'Changes in Control of Registrant', event: 'change_of_control' },
  '5.02': {
    title: 'Departure of Directors or Certain Officers; Election of Directors; Appointment of Certain Officers',
    event: 'leadership_change',
  },
  '5.03': { title: 'Amendments to Articles of Incorporation or Bylaws; Change in Fiscal Year', event: 'governance' },
  '5.04': { title: "Temporary Suspension of Trading Under Registrant's Employee Benefit Plans", event: 'governance' },
  '5.05': { title: "Amendments to the Registrant's Code of Ethics", event: 'governance' },
  '5.07': { title: 'Submission of Matters to a Vote of Security Holders', event: 'shareholder_vote' },
  '7.01': { title: 'Regulation FD Disclosure', event: 'announcement' },
  '8.01': { title: 'Other Events', event: 'other_event' },
  '9.01': { title: 'Financial Statements and Exhibits', event: 'exhibits' },
};

/** Pre-23-Aug-2004 8-K item numbers mapped to today's. */
export const PRE_2004_ITEMS: Record<string, string> = {
  '1': '5.01',
  '2': '2.01',
  '3': '1.03',
  '4': '4.01',
  '5': '8.01',
  '6': '5.02',
  '7': '9.01',
  '8': '5.03',
  '9': '7.01',
  '10': '5.05',
  '11': '5.04',
  '12': '2.02',
};
export const NEW_ITEMS_FROM = '2004-08-23';

/** Items that make no timeline event of their own (exhibit lists). */
const NO_EVENT = new Set(['9.01']);

export interface EightKHints {
  cik?: number | null;
  accession?: string | null;
  filing_date?: string | null;
}

export interface EightKItem {
  item: string;
  /** The item number as written, when it was a pre-2004 number. */
  original_item: string | null;
  title: string;
  event_type: string;
  /** First words after the heading (≤ 300 chars). */
  summary: string | null;
  /**
   * The sentence announcing that the company launched a product, when this item (7.01 or 8.01) or the filing's
   * EX-99 press-release headline says so (docs/signal-labelling-rules.md §2); the item's `event_type` is then
   * `product_launch`.
   */
  product_launch: { evidence: string } | null;
}

export interface ParsedEightK {
  cik: number | null;
  accession: string | null;
  form: string;
  company_name: string | null;
  filing_date: string | null;
  /** Event date (`CONFORMED PERIOD OF REPORT` or the cover's "Date of Report"). */
  event_date: string | null;
  header: SgmlHeader | null;
  items: EightKItem[];
  /** The document's text (for signals or search); not stored. */
  text: string;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** Parses a written date like "March 2, 2026" to YYYY-MM-DD. */
export function parseWrittenDate(s: string): string | null {
  const m = /\b(January|February|March|April|May|June|July|August|September|October|November|December)\s+(\d{1,2}),?\s+(\d{4})/i.exec(s);
  if (!m) return null;
  return `${m[3]}-${String(MONTHS.indexOf(m[1].toLowerCase()) + 1).padStart(2, '0')}-${m[2].padStart(2, '0')}`;
}

/** Parses one 8-K document or complete submission. Throws ParseError when it is not an 8-K. */
export function parseEightK(input: Uint8Array | string, file: string, hints: EightKHints = {}): ParsedEightK {
  const raw = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  if (!raw.trim()) throw new ParseError('empty 8-K document', { file });
  const header = parseSgmlHeader(raw);
  const docs = splitDocuments(raw);
  const primary = docs.find((d) => d.type && /^8-K/i.test(d.type)) ?? docs[0];
  const text = htmlToText(primary.text);
  const form = header?.form ?? primary.type ?? (/\bFORM\s+8-K(\/A)?\b/i.test(text.slice(0, 5000)) ? '8-K' : null);
  if (!form || !/^8-K/i.test(form)) throw new ParseError(`not an 8-K (form ${form ?? 'unknown'})`, { file });
  const filer = header?.entities.find((e) => e.role === 'FILER' || e.role === 'SUBJECT COMPANY');
  const coverDate = parseWrittenDate(/Date of [Rr]eport[^\n]{0,200}/.exec(text)?.[0] ?? '') ?? parseWrittenDate(text.slice(0, 3000));
  const filingDate = header?.filed ?? hints.filing_date ?? null;
  const eventDate = header?.period ?? coverDate;
  const old = (filingDate ?? eventDate ?? '9999') < NEW_ITEMS_FROM;
  const items = extractItems(text, old);
  // The SGML header names the items by title; add any the body did not show as headings.
  for (const title of header?.item_information ?? []) {
    const num = Object.entries(EIGHT_K_ITEMS).find(
      ([, v]) => normTitle(v.title) === normTitle(title) || normTitle(title).startsWith(normTitle(v.title).slice(0, 30)),
    )?.[0];
    if (num && !items.some((i) => i.item === num)) items.push(itemRow(num, null, null));
  }
  // A press release (EX-99.x) whose opening announces a launch makes the filing's 7.01/8.01 item a launch.
  const release = docs
    .filter((d) => d.type && /^EX-99/i.test(d.type))
    .map((d) => htmlToText(d.text).slice(0, 1500))
    .join('\n');
  const launch = release ? findLaunchSentence(release) : null;
  if (launch) {
    const it = items.find((i) => LAUNCH_ITEMS.has(i.item) && !i.product_launch);
    if (it) Object.assign(it, { product_launch: { evidence: launch }, event_type: 'product_launch' });
  }
  items.sort((a, b) => a.item.localeCompare(b.item));
  return {
    cik: hints.cik ?? filer?.cik ?? null,
    accession: header?.accession ?? hints.accession ?? null,
    form: form.toUpperCase(),
    company_name: filer?.name ?? null,
    filing_date: filingDate,
    event_date: eventDate,
    header,
    items,
    text,
  };
}

function normTitle(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z]+/g, ' ')
    .trim();
}

function itemRow(item: string, original: string | null, summary: string | null, launch: string | null = null): EightKItem {
  const def = EIGHT_K_ITEMS[item] ?? { title: `Item ${item}`, event: 'other_event' };
  const product_launch = launch && LAUNCH_ITEMS.has(item) ? { evidence: launch } : null;
  return {
    item,
    original_item: original,
    title: def.title,
    event_type: product_launch ? 'product_launch' : def.event,
    summary,
    product_launch,
  };
}

/** Items under which companies announce launches (Regulation FD, Other Events). */
const LAUNCH_ITEMS = new Set(['7.01', '8.01']);
/** The company launched, introduced, unveiled or made available something (rules §2, "Product launch"). */
const LAUNCH_VERB =
  /\b(?:launch(?:es|ed)|introduc(?:es|ed)|unveil(?:s|ed)|announc(?:es|ed|ing) the (?:launch|introduction|release|(?:general )?availability) of|(?:is|are) now (?:generally )?available|beg(?:an|ins) shipping)\b/i;
/** ...a product, service, platform, model, device or product line. */
const LAUNCH_OBJECT =
  /\b(?:products?|product lines?|services?|platforms?|models?|devices?|apps?|applications?|software|solutions?|features?|offerings?|versions?|drugs?|vehicles?|chips?|processors?)\b/i;
/** Not a launch: agreements, deals, results, presentations, and launches that are only planned. */
const NOT_LAUNCH =
  /\b(?:agreements?|contracts?|acqui(?:re|red|res|sition)|merger|financial results|presentation|conference|expects? to|plans? to|intends? to|will (?:launch|introduce|unveil)|may (?:launch|introduce))\b/i;

/** The first sentence of `text` that announces a product launch, or null. */
export function findLaunchSentence(text: string): string | null {
  for (const s of text.split(/(?<=[.!?])\s+|\n/)) {
    if (LAUNCH_VERB.test(s) && LAUNCH_OBJECT.test(s) && !NOT_LAUNCH.test(s)) return s.trim().slice(0, 300);
  }
  return null;
}

/** "None.", "Not applicable." or "N/A" after an item heading: pre-2004 forms listed every item. */
const EMPTY_ITEM = /^(?:none|not applicable|n\/?a|inapplicable)\.?$/i;

/** Finds `Item N.NN` (or pre-2004 `Item N.`) headings at line starts and the text after each. */
export function extractItems(text: string, pre2004: boolean): EightKItem[] {
  const lines = text.split('\n');
  const found = new Map<string, EightKItem>();
  const re = pre2004 ? /^ITEM\s+(\d{1,2})\s*[.:\-–—]\s*(.*)$/i : /^ITEM\s*(\d{1,2}\.\d{2})\s*[.:\-–—|]?\s*(.*)$/i;
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i]);
    if (!m) continue;
    const original = pre2004 ? m[1] : null;
    const item = pre2004 ? PRE_2004_ITEMS[m[1]] : m[1];
    if (!item || found.has(item) || (!pre2004 && !EIGHT_K_ITEMS[item])) continue;
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && body.join(' ').length < 1500; j++) {
      if (re.test(lines[j]) || /^SIGNATURES?$/i.test(lines[j])) break;
      body.push(lines[j]);
    }
    const text = body.join(' ').replace(/\s+/g, ' ').trim();
    // The answer is the first line after the heading (or after a title line in capitals).
    const answer = (body[0] && !/[a-z]/.test(body[0]) && body.length > 1 ? body[1] : body[0]) ?? '';
    if (EMPTY_ITEM.test(answer.trim()) || EMPTY_ITEM.test(m[2].replace(/^[^.]*\.\s*/, '').trim())) continue;
    found.set(item, itemRow(item, original, text.slice(0, 300) || null, findLaunchSentence(body.join('\n'))));
  }
  return [...found.values()];
}

/** Whether an item becomes a timeline event (exhibit lists do not). */
export function isTimelineItem(item: string): boolean {
  return !NO_EVENT.has(item);
}
