/**
 * Parses EDGAR submissions JSON: the main `CIK##########.json` (identity plus
 * `filings.recent`) and the overflow pages `CIK##########-submissions-NNN.json`
 * (bare column arrays, no wrapper). New fields (`ownerOrg`, `lei`, `core_type`)
 * are tolerated. Filings whose columns are ragged or whose accession is not of
 * the EDGAR form are rejected with their index, never silently dropped.
 */
import { ParseError } from '../../lib/errors.ts';
import { ACCESSION_RE, normalizeCik, padCik } from './cik.ts';
import { filingColumnsSchema, submissionsFileSchema, type Address, type CompanyRow, type FilingRow } from './edgar.schema.ts';
import { parseJsonBytes, type RowReject } from './json-bytes.ts';

export interface ParsedSubmissions {
  company: CompanyRow;
  filings: FilingRow[];
  rejects: RowReject[];
}

export interface ParsedFilingPage {
  cik: number;
  filings: FilingRow[];
  rejects: RowReject[];
}

const OVERFLOW_RE = /CIK(\d{10})-submissions-\d{3}\.json$/;

/** True when the file name is an overflow page. */
export function isOverflowPage(fileName: string): boolean {
  return OVERFLOW_RE.test(fileName);
}

export function parseSubmissions(bytes: Uint8Array | string, file: string): ParsedSubmissions {
  const parsed = submissionsFileSchema.safeParse(parseJsonBytes(bytes, file));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ParseError(`not an EDGAR submissions file: ${issue?.path.join('.')}: ${issue?.message}`, { file });
  }
  const s = parsed.data;
  let cik: number;
  try {
    cik = normalizeCik(s.cik);
  } catch (e) {
    throw new ParseError((e as Error).message, { file });
  }
  const company: CompanyRow = {
    cik,
    cik_padded: padCik(cik),
    name: s.name,
    entity_type: blank(s.entityType),
    sic: blank(s.sic),
    sic_description: blank(s.sicDescription),
    owner_org: blank(s.ownerOrg),
    category: blank(s.category),
    fiscal_year_end: blank(s.fiscalYearEnd),
    state_of_incorporation: blank(s.stateOfIncorporation),
    state_of_incorporation_description: blank(s.stateOfIncorporationDescription),
    ein: blank(s.ein),
    lei: blank(s.lei),
    phone: blank(s.phone),
    website: blank(s.website),
    investor_website: blank(s.investorWebsite),
    description: blank(s.description),
    tickers: s.tickers.map((t) => t.toUpperCase()),
    exchanges: s.exchanges,
    business_address: toAddress(s.addresses?.business),
    mailing_address: toAddress(s.addresses?.mailing),
    former_names: s.formerNames.map((f) => ({ name: f.name, from: f.from?.slice(0, 10) ?? null, to: f.to?.slice(0, 10) ?? null })),
    filing_pages: s.filings.files.map((f) => f.name),
  };
  const { filings, rejects } = filingsFromColumns(cik, s.filings.recent as Record<string, unknown[]>, '/filings/recent');
  return { company, filings, rejects };
}

/** Parses an overflow page; the CIK comes from the file name (the page carries none). */
export function parseFilingPage(bytes: Uint8Array | string, file: string): ParsedFilingPage {
  const m = OVERFLOW_RE.exec(file);
  if (!m) throw new ParseError('overflow page name must be CIK##########-submissions-NNN.json', { file });
  const parsed = filingColumnsSchema.safeParse(parseJsonBytes(bytes, file));
  if (!parsed.success) throw new ParseError(`not an EDGAR submissions page: ${parsed.error.issues[0]?.message}`, { file });
  const cik = normalizeCik(m[1]);
  return { cik, ...filingsFromColumns(cik, parsed.data as Record<string, unknown[]>, '') };
}

function filingsFromColumns(cik: number, cols: Record<string, unknown[]>, pointer: string): { filings: FilingRow[]; rejects: RowReject[] } {
  const n = cols.accessionNumber.length;
  const filings: FilingRow[] = [];
  const rejects: RowReject[] = [];
  const at = <T>(k: string, i: number): T | null => {
    const col = cols[k];
    const v = col ? col[i] : null;
    return v === undefined || v === '' ? null : (v as T);
  };
  for (let i = 0; i < n; i++) {
    const accession = String(cols.accessionNumber[i]);
    const form = at<string>('form', i);
    const filingDate = at<string>('filingDate', i);
    if (!ACCESSION_RE.test(accession) || !form || !filingDate || !/^\d{4}-\d{2}-\d{2}$/.test(filingDate)) {
      rejects.push({
        line: null,
        pointer: `${pointer}/accessionNumber/${i}`,
        reason: `invalid filing (accession ${accession}, form ${form}, date ${filingDate})`,
        raw: accession,
      });
      continue;
    }
    const items = at<string>('items', i);
    filings.push({
      cik,
      accession,
      form,
      filing_date: filingDate,
      report_date: at<string>('reportDate', i),
      acceptance_datetime: at<string>('acceptanceDateTime', i),
      act: at<string>('act', i),
      file_number: at<string>('fileNumber', i),
      film_number: at<string>('filmNumber', i),
      items: items
        ? items
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean)
        : [],
      size: at<number>('size', i),
      is_xbrl: Boolean(at('isXBRL', i)),
      is_inline_xbrl: Boolean(at('isInlineXBRL', i)),
      primary_document: at<string>('primaryDocument', i),
      primary_doc_description: at<string>('primaryDocDescription', i),
    });
  }
  return { filings, rejects };
}

function blank(v: string | null | undefined): string | null {
  return v == null || v.trim() === '' ? null : v;
}

function toAddress(a: Record<string, unknown> | null | undefined): Address | null {
  if (!a) return null;
  const s = (k: string) => blank((a[k] as string | null | undefined) ?? null);
  const addr = {
    street1: s('street1'),
    street2: s('street2'),
    city: s('city'),
    state_or_country: s('stateOrCountry'),
    zip_code: s('zipCode'),
    country: s('country'),
  };
  return Object.values(addr).every((v) => v === null) ? null : addr;
}
