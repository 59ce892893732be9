/**
 * The SGML wrappers of EDGAR submissions: the `.txt` complete submission
 * (`<SEC-HEADER>` with `KEY:\tvalue` lines, then `<DOCUMENT>` blocks) and the
 * `.pds.sgml`/`.hdr.sgml` form (`<KEY>value` tags). The header carries
 * `ACCEPTANCE-DATETIME` as Eastern wall-clock `YYYYMMDDHHMMSS`, which is the
 * authoritative acceptance time for BMO/AMC (the submissions JSON labels
 * Eastern times with `Z`; see shared notes, EDGAR fact 7).
 */

export interface SgmlHeader {
  accession: string | null;
  form: string | null;
  /** Eastern wall-clock acceptance time, `YYYY-MM-DDTHH:MM:SS` (no offset). */
  acceptance_et: string | null;
  /** The same instant in UTC (ISO-8601 with Z). */
  acceptance_utc: string | null;
  filed: string | null;
  period: string | null;
  /** `ITEM INFORMATION:` lines (item titles, not numbers). */
  item_information: string[];
  /** Every CENTRAL INDEX KEY with its role (FILER, ISSUER, REPORTING-OWNER, SUBJECT COMPANY). */
  entities: Array<{ role: string; cik: number; name: string | null }>;
}

export interface SgmlDocument {
  type: string | null;
  sequence: number | null;
  filename: string | null;
  description: string | null;
  text: string;
}

const yyyymmdd = (s: string | undefined | null) => (s && /^\d{8}/.test(s) ? `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}` : null);

/** Parses the SEC header of a complete submission or SGML wrapper; null when the text has none. */
export function parseSgmlHeader(text: string): SgmlHeader | null {
  const head = text.slice(0, Math.min(text.length, (text.indexOf('<DOCUMENT>') + 1 || 60001) + 0));
  if (!/<SEC-HEADER>|<SUBMISSION>|ACCESSION NUMBER:|<ACCESSION-NUMBER>/.test(head)) return null;
  const one = (re: RegExp) => re.exec(head)?.[1]?.trim() ?? null;
  const accept = one(/<ACCEPTANCE-DATETIME>\s*(\d{14})/);
  const acceptance_et = accept
    ? `${accept.slice(0, 4)}-${accept.slice(4, 6)}-${accept.slice(6, 8)}T${accept.slice(8, 10)}:${accept.slice(10, 12)}:${accept.slice(12, 14)}`
    : null;
  const entities: SgmlHeader['entities'] = [];
  let role = 'FILER';
  let name: string | null = null;
  for (const line of head.split(/\r?\n/)) {
    const r = /^<?(FILER|ISSUER|REPORTING-OWNER|SUBJECT COMPANY|FILED BY)>?:?\s*$/.exec(line.trim());
    if (r) {
      role = r[1];
      name = null;
      continue;
    }
    const n = /^(?:\s*COMPANY CONFORMED NAME:\s*|<CONFORMED-NAME>)(.+)$/.exec(line);
    if (n) {
      name = n[1].trim();
      continue;
    }
    const c = /^(?:\s*CENTRAL INDEX KEY:\s*|<CIK>)(\d{1,10})\s*$/.exec(line);
    if (c) entities.push({ role, cik: Number(c[1]), name });
  }
  return {
    accession: one(/ACCESSION NUMBER:\s*(\d{10}-\d{2}-\d{6})/) ?? one(/<ACCESSION-NUMBER>\s*(\d{10}-\d{2}-\d{6})/),
    form: one(/CONFORMED SUBMISSION TYPE:\s*(.+)/) ?? one(/<SUBMISSION>\s*\n(?:[\s\S]*?)<TYPE>(.+)/),
    acceptance_et,
    acceptance_utc: acceptance_et ? easternToUtc(acceptance_et) : null,
    filed: yyyymmdd(one(/FILED AS OF DATE:\s*(\d{8})/) ?? one(/<FILING-DATE>\s*(\d{8})/)),
    period: yyyymmdd(one(/CONFORMED PERIOD OF REPORT:\s*(\d{8})/) ?? one(/<PERIOD>\s*(\d{8})/)),
    item_information: [...head.matchAll(/ITEM INFORMATION:\s*(.+)/g)].map((m) => m[1].trim()),
    entities,
  };
}

/** Splits a complete submission into its `<DOCUMENT>` blocks; a bare document yields itself. */
export function splitDocuments(text: string): SgmlDocument[] {
  const docs: SgmlDocument[] = [];
  const re = /<DOCUMENT>([\s\S]*?)(?:<\/DOCUMENT>|$)/g;
  for (const m of text.matchAll(re)) {
    const body = m[1];
    const tag = (t: string) => new RegExp(`<${t}>([^\\n<]*)`).exec(body)?.[1]?.trim() || null;
    const textStart = body.indexOf('<TEXT>');
    const textEnd = body.lastIndexOf('</TEXT>');
    docs.push({
      type: tag('TYPE'),
      sequence: tag('SEQUENCE') ? Number(tag('SEQUENCE')) : null,
      filename: tag('FILENAME'),
      description: tag('DESCRIPTION'),
      text: textStart >= 0 ? body.slice(textStart + 6, textEnd > textStart ? textEnd : undefined) : body,
    });
  }
  return docs.length ? docs : [{ type: null, sequence: null, filename: null, description: null, text }];
}

/**
 * Converts an America/New_York wall-clock time (`YYYY-MM-DDTHH:MM:SS`) to UTC
 * ISO-8601, applying US daylight-saving rules via Intl (no clock, no I/O).
 */
export function easternToUtc(et: string): string {
  const asUtc = Date.parse(`${et}Z`);
  // The offset at that instant: EST -5 h or EDT -4 h. Try EDT first, check it round-trips.
  for (const offH of [4, 5]) {
    const guess = asUtc + offH * 3_600_000;
    if (utcToEastern(new Date(guess).toISOString()) === et) return new Date(guess).toISOString().replace('.000Z', 'Z');
  }
  return new Date(asUtc + 5 * 3_600_000).toISOString().replace('.000Z', 'Z');
}

const ET_FMT = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/New_York',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** Converts a UTC instant to America/New_York wall-clock `YYYY-MM-DDTHH:MM:SS`. */
export function utcToEastern(utc: string): string {
  const p = Object.fromEntries(ET_FMT.formatToParts(new Date(utc)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

/**
 * Why bytes served as a complete submission (`/Archives/edgar/data/{cik}/{accession}.txt`) are not one, or null
 * when they are. A complete submission opens with `<SEC-DOCUMENT>` (or, before 2002 or so, a
 * `-----BEGIN PRIVACY-ENHANCED MESSAGE-----` wrapper) and closes with `</SEC-DOCUMENT>` (or the wrapper's END
 * line). `truncated`: it opens but does not close (a body cut short in transit: fetch it again);
 * `not-a-submission`: something else, e.g. an HTML error page served with status 200. `position` is the byte
 * offset where the check failed.
 */
export function completeSubmissionProblem(
  input: Uint8Array | string,
): { kind: 'truncated' | 'not-a-submission'; reason: string; position: number } | null {
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
  const start = text.slice(0, 512).trimStart();
  const pem = start.startsWith('-----BEGIN PRIVACY-ENHANCED MESSAGE-----');
  if (!pem && !start.startsWith('<SEC-DOCUMENT>')) {
    const what = /<html|<!doctype/i.test(start) ? 'an HTML page' : `'${start.slice(0, 40).replace(/\s+/g, ' ')}'`;
    return { kind: 'not-a-submission', reason: `not a complete submission: starts with ${what}, not <SEC-DOCUMENT>`, position: 0 };
  }
  const end = text.trimEnd();
  const closer = pem ? '-----END PRIVACY-ENHANCED MESSAGE-----' : '</SEC-DOCUMENT>';
  if (!end.endsWith(closer))
    return {
      kind: 'truncated',
      reason: `complete submission cut short: no closing ${closer}`,
      position: Buffer.byteLength(text, 'latin1'),
    };
  return null;
}
