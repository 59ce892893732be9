/**
 * Recognising FMCSA bulk files by their header row (pure). File names vary by
 * download (Socrata export, L&I download, old ai.fmcsa monthly names), so the
 * header is the contract: a file is the dataset whose column set it carries,
 * whatever the case of the names or their order (the re-serialised SMS census
 * fixture is lower-case with FAX moved last).
 */
import {
  AUTHORITY_HEADER,
  COMPANY_CENSUS_HEADER,
  CRASH_HEADER,
  ENFORCEMENT_HEADER,
  INSPECTION_HEADER,
  INSPECTION_UNITS_HEADER,
  INSURANCE_HEADER,
  OOS_ORDERS_HEADER,
  REVOCATION_HEADER,
  REVOCATION_SOCRATA_HEADER,
  SMS_CENSUS_HEADER,
  SMS_PASSENGER_HEADER,
  SMS_PROPERTY_HEADER,
  VIOLATIONS_HEADER,
} from './fmcsa-headers.ts';

export type FmcsaKind =
  | 'company_census'
  | 'sms_census'
  | 'crash'
  | 'inspection'
  | 'inspection_units'
  | 'violations'
  | 'sms_property'
  | 'sms_passenger'
  | 'revocation'
  | 'authority'
  | 'insurance'
  | 'oos_orders'
  | 'enforcement';

export interface FormatSpec {
  kind: FmcsaKind;
  /** Dataset id used in `sources` and origin leaves. */
  dataset: string;
  /** Warehouse table the rows land in. */
  table: string;
  header: readonly string[];
  /** Alternative column names (Socrata aliases) mapped to the canonical ones. */
  aliases?: Record<string, string>;
  /** Canonical URL of the public dataset. */
  url: string;
}

const DTG = 'https://data.transportation.gov/resource';
export const FORMATS: readonly FormatSpec[] = [
  {
    kind: 'company_census',
    dataset: 'fmcsa/company-census',
    table: 'carriers',
    header: COMPANY_CENSUS_HEADER,
    url: `${DTG}/az4n-8mr2.csv`,
  },
  { kind: 'sms_census', dataset: 'fmcsa/sms-input-census', table: 'carriers', header: SMS_CENSUS_HEADER, url: `${DTG}/kjg3-diqy.csv` },
  { kind: 'crash', dataset: 'fmcsa/crash', table: 'crashes', header: CRASH_HEADER, url: `${DTG}/aayw-vxb3.csv` },
  { kind: 'inspection', dataset: 'fmcsa/inspection', table: 'inspections', header: INSPECTION_HEADER, url: `${DTG}/fx4q-ay7w.csv` },
  {
    kind: 'inspection_units',
    dataset: 'fmcsa/inspection-units',
    table: 'inspection_units',
    header: INSPECTION_UNITS_HEADER,
    url: `${DTG}/wt8s-2hbx.csv`,
  },
  { kind: 'violations', dataset: 'fmcsa/violations', table: 'violations', header: VIOLATIONS_HEADER, url: `${DTG}/876r-jsdb.csv` },
  {
    kind: 'sms_property',
    dataset: 'fmcsa/sms-pass-property',
    table: 'sms_basics',
    header: SMS_PROPERTY_HEADER,
    url: `${DTG}/4y6x-dmck.csv`,
  },
  { kind: 'sms_passenger', dataset: 'fmcsa/sms-pass', table: 'sms_basics', header: SMS_PASSENGER_HEADER, url: `${DTG}/m3ry-qcip.csv` },
  {
    kind: 'revocation',
    dataset: 'fmcsa/li-revocation',
    table: 'revocations',
    header: REVOCATION_HEADER,
    url: 'https://li-public.fmcsa.dot.gov/LIVIEW/pkg_menu.prc_menu',
    aliases: {
      TYPE_LICENSE: 'OPERATING_AUTHORITY_REGISTRATION_TYPE',
      ORDER1_SERVE_DATE: 'SERVE_DATE',
      ORDER2_TYPE_DESC: 'REVOCATION_TYPE',
      ORDER2_EFFECTIVE_DATE: 'EFFECTIVE_DATE',
      USDOT_NUMBER: 'DOT_NUMBER',
    },
  },
  { kind: 'authority', dataset: 'fmcsa/li-carrier', table: 'authority', header: AUTHORITY_HEADER, url: `${DTG}/6eyk-hxee.csv` },
  { kind: 'insurance', dataset: 'fmcsa/li-insurance', table: 'insurance', header: INSURANCE_HEADER, url: `${DTG}/ypjt-5ydn.csv` },
  { kind: 'oos_orders', dataset: 'fmcsa/oos-orders', table: 'oos_orders', header: OOS_ORDERS_HEADER, url: `${DTG}/p2mt-9ige.csv` },
  {
    kind: 'enforcement',
    dataset: 'fmcsa/enforcement-cases',
    table: 'enforcement_cases',
    header: ENFORCEMENT_HEADER,
    url: 'https://ai.fmcsa.dot.gov/',
  },
];
void REVOCATION_SOCRATA_HEADER;

/** Splits a CSV header line (quoted or not) into upper-case names. */
export function splitHeader(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let q = false;
  for (const ch of line.replace(/^\uFEFF/, '').replace(/\r?\n?$/, '')) {
    if (ch === '"') q = !q;
    else if (ch === ',' && !q) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((s) => s.trim().toUpperCase());
}

export interface DetectedFormat {
  spec: FormatSpec;
  /** The file's own columns in file order, canonical upper-case names (aliases resolved). */
  columns: string[];
}

/**
 * Recognises a file by its header line. Returns null for an unknown header
 * (the plan reports it as a file-level reject, never silently drops it).
 */
export function detectFormat(headerLine: string): DetectedFormat | null {
  const raw = splitHeader(headerLine);
  for (const spec of FORMATS) {
    const cols = raw.map((c) => spec.aliases?.[c] ?? c);
    if (cols.length !== spec.header.length) continue;
    const want = new Set(spec.header.map((h) => h.toUpperCase()));
    if (cols.every((c) => want.has(c)) && new Set(cols).size === want.size) return { spec, columns: cols };
  }
  return null;
}
