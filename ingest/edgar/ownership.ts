/**
 * Ownership documents (Forms 3, 4, 5 and amendments) parsed with
 * fast-xml-parser: the issuer and each reporting owner with the relationship
 * flags and officer title. Accepts the bare XML, a complete `.txt` submission
 * and the `.pds.sgml` wrapper (the `<ownershipDocument>` element is cut out of
 * either). Every director and officer becomes a role row of the issuer.
 */
import { XMLParser } from 'fast-xml-parser';
import { ParseError } from '../../lib/errors.ts';
import { parseSgmlHeader } from './sgml.ts';

export interface OwnershipRole {
  person_name: string;
  person_cik: number | null;
  issuer_cik: number;
  issuer_name: string | null;
  issuer_ticker: string | null;
  /** director | officer | ten_percent_owner | other */
  role_type: string;
  /** Officer title, "Director", "10% Owner" or the free `otherText`. */
  role: string;
  as_of: string | null;
}

export interface ParsedOwnership {
  form: string;
  accession: string | null;
  period: string | null;
  acceptance_et: string | null;
  roles: OwnershipRole[];
}

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'reportingOwner',
});

const flag = (v: unknown) => v === true || v === 1 || v === '1' || String(v).toLowerCase() === 'true';
const str = (v: unknown): string | null => {
  if (v == null) return null;
  if (typeof v === 'object' && 'value' in (v as object)) return str((v as { value: unknown }).value);
  const s = String(v).trim();
  return s ? s : null;
};

/** Turns "Maestri Luca" (EDGAR's LAST FIRST MIDDLE) into "Luca Maestri"; leaves "First Last" names alone. */
export function displayName(edgarName: string): string {
  const n = edgarName.replace(/\s+/g, ' ').trim();
  if (ENTITY_RE.test(n)) return n;
  if (n.includes(',')) {
    const [last, rest] = n.split(',', 2);
    return titleCaseName(`${rest.trim()} ${last.trim()}`);
  }
  const parts = n.split(' ');
  if (parts.length < 2) return titleCaseName(n);
  const suffix = /^(jr\.?|sr\.?|ii|iii|iv)$/i.test(parts[parts.length - 1]) ? parts.pop()! : null;
  const [last, ...given] = parts;
  return titleCaseName([...given, last, suffix].filter(Boolean).join(' '));
}

const ENTITY_RE =
  /\b(inc|corp|corporation|llc|l\.?p|ltd|limited|fund|partners|trust|holdings|group|management|capital|company|co|plc|pte|gmbh|s\.?a)\.?(\b|$)/i;

function titleCaseName(s: string): string {
  return s.toLowerCase().replace(/(^|[\s\-'’.])([a-z])/g, (_m, p: string, c: string) => p + c.toUpperCase());
}

/**
 * The elements the roles come from (document type, period, issuer, reporting
 * owners), cut out of the document so the XML parser skips the transaction
 * tables and footnotes (most of the bytes). Falls back to the whole document
 * when an element is missing.
 */
function relevantXml(xml: string): string {
  const pick = (tag: string, all = false): string[] => {
    const out: string[] = [];
    let from = 0;
    for (;;) {
      const a = xml.indexOf(`<${tag}>`, from);
      if (a < 0) break;
      const b = xml.indexOf(`</${tag}>`, a);
      if (b < 0) return [];
      out.push(xml.slice(a, b + tag.length + 3));
      from = b;
      if (!all) break;
    }
    return out;
  };
  const issuer = pick('issuer');
  const owners = pick('reportingOwner', true);
  if (!issuer.length || !owners.length) return xml;
  return `<ownershipDocument>${pick('documentType').join('')}${pick('periodOfReport').join('')}${issuer[0]}${owners.join('')}</ownershipDocument>`;
}

/** Parses one ownership document. Throws ParseError when there is no `<ownershipDocument>`. */
export function parseOwnership(input: Uint8Array | string, file: string, hints: { accession?: string | null } = {}): ParsedOwnership {
  const raw = typeof input === 'string' ? input : Buffer.from(input).toString('utf8');
  const start = raw.indexOf('<ownershipDocument');
  const end = raw.indexOf('</ownershipDocument>');
  if (start < 0 || end < 0) throw new ParseError('no <ownershipDocument> element', { file });
  // biome-ignore lint/suspicious/noExplicitAny: untyped XML tree of the source; every field read is coerced (String(), Number()) where it is used
  let doc: Record<string, any>;
  try {
    doc = parser.parse(relevantXml(raw.slice(start, end + '</ownershipDocument>'.length))).ownershipDocument;
  } catch (e) {
    throw new ParseError(`malformed ownership XML: ${(e as Error).message}`, { file });
  }
  const header = parseSgmlHeader(raw);
  const issuer = doc.issuer ?? {};
  const issuerCik = Number(str(issuer.issuerCik));
  if (!Number.isSafeInteger(issuerCik) || issuerCik <= 0) throw new ParseError('ownership document without a valid issuerCik', { file });
  const form = str(doc.documentType) ?? header?.form ?? '4';
  const period = str(doc.periodOfReport);
  const roles: OwnershipRole[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: untyped XML tree of the source; every field read is coerced (String(), Number()) where it is used
  for (const o of (doc.reportingOwner ?? []) as Array<Record<string, any>>) {
    const id = o.reportingOwnerId ?? {};
    const rel = o.reportingOwnerRelationship ?? {};
    const name = str(id.rptOwnerName);
    if (!name) continue;
    const base = {
      person_name: displayName(name),
      person_cik: str(id.rptOwnerCik) ? Number(str(id.rptOwnerCik)) : null,
      issuer_cik: issuerCik,
      issuer_name: str(issuer.issuerName),
      issuer_ticker: str(issuer.issuerTradingSymbol)?.toUpperCase() ?? null,
      as_of: period,
    };
    if (flag(rel.isOfficer)) roles.push({ ...base, role_type: 'officer', role: str(rel.officerTitle) ?? 'Officer' });
    if (flag(rel.isDirector)) roles.push({ ...base, role_type: 'director', role: 'Director' });
    if (flag(rel.isTenPercentOwner)) roles.push({ ...base, role_type: 'ten_percent_owner', role: '10% Owner' });
    if (flag(rel.isOther)) roles.push({ ...base, role_type: 'other', role: str(rel.otherText) ?? 'Other' });
  }
  return { form, accession: header?.accession ?? hints.accession ?? null, period, acceptance_et: header?.acceptance_et ?? null, roles };
}
