/**
 * EDGAR identifiers. CIKs are integers, written 10-digit zero-padded in
 * data.sec.gov URLs (`CIK0000320193.json`) and unpadded in Archives paths
 * (`/Archives/edgar/data/320193/...`). Accession numbers are
 * `{filer-or-agent CIK:10}-{yy}-{seq:6}`; the prefix is often a filing agent,
 * so the company is never inferred from it.
 */
export function normalizeCik(value: string | number): number {
  const n = typeof value === 'number' ? value : Number.parseInt(String(value).replace(/^CIK/i, ''), 10);
  if (!Number.isSafeInteger(n) || n <= 0 || n > 9_999_999_999) throw new RangeError(`not a CIK: ${JSON.stringify(value)}`);
  return n;
}

export function padCik(cik: number): string {
  return String(cik).padStart(10, '0');
}

export const ACCESSION_RE = /^\d{10}-\d{2}-\d{6}$/;

export function submissionsUrl(cik: number, base = 'https://data.sec.gov'): string {
  return `${base}/submissions/CIK${padCik(cik)}.json`;
}

export function filingFolderUrl(cik: number, accession: string, base = 'https://www.sec.gov'): string {
  return `${base}/Archives/edgar/data/${cik}/${accession.replace(/-/g, '')}`;
}

export function filingDocumentUrl(cik: number, accession: string, document: string, base = 'https://www.sec.gov'): string {
  return `${filingFolderUrl(cik, accession, base)}/${document}`;
}
