/**
 * EDGAR index files: `daily-index/{YYYY}/QTR{n}/{form,company,master}.{YYYYMMDD}.idx`
 * and `full-index/{YYYY}/QTR{n}/{form,company,master}.idx`. `master` is
 * pipe-delimited (`CIK|Company Name|Form Type|Date Filed|File Name`); `form`
 * and `company` are fixed-width with column starts taken from the header line.
 * Headers are free text of varying length (the 1993 file adds "Cloud HTTP").
 * Dates are `YYYYMMDD` in daily files and `YYYY-MM-DD` in quarterly ones.
 *
 * A row whose fields do not validate (a company name overflowing its column
 * pushes the CIK out of place) is rejected with its line; a file with a header
 * but no rows, or no header at all, throws ParseError (a file-level reject).
 */
import { ParseError } from '../../lib/errors.ts';
import type { RowReject } from './json-bytes.ts';

export interface IndexEntry {
  cik: number;
  company_name: string;
  form: string;
  date_filed: string;
  file_name: string;
  accession: string | null;
}

export interface ParsedIndex {
  kind: 'master' | 'form' | 'company';
  rows: IndexEntry[];
  rejects: RowReject[];
}

const ACC_IN_PATH = /(\d{10}-\d{2}-\d{6})\.txt$/;

function normDate(s: string): string | null {
  if (/^\d{8}$/.test(s)) return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return s;
  return null;
}

function validate(cikS: string, company: string, form: string, dateS: string, fileName: string): IndexEntry | string {
  if (!/^\d{1,10}$/.test(cikS)) return `CIK '${cikS}' is not a number (misaligned columns?)`;
  const date = normDate(dateS);
  if (!date) return `date '${dateS}' is neither YYYYMMDD nor YYYY-MM-DD`;
  if (!form) return 'empty form type';
  if (!/^edgar\/data\/\d+\//.test(fileName)) return `file name '${fileName}' is not an edgar/data path`;
  if (!fileName.startsWith(`edgar/data/${Number(cikS)}/`)) return `file name '${fileName}' does not belong to CIK ${cikS}`;
  return {
    cik: Number(cikS),
    company_name: company,
    form,
    date_filed: date,
    file_name: fileName,
    accession: ACC_IN_PATH.exec(fileName)?.[1] ?? null,
  };
}

/** Parses one index file (bytes or text). */
export function parseEdgarIndex(input: Uint8Array | string, file: string): ParsedIndex {
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
  if (!text.trim()) throw new ParseError('empty index file', { file, line: 1 });
  const lines = text.split(/\r?\n/);
  const dash = lines.findIndex((l) => /^-{20,}\s*$/.test(l));
  if (dash < 1) throw new ParseError('no column header and dashed rule: not an EDGAR index file', { file });
  // The company index wraps its header over two lines; the column line is the one naming "Form Type".
  let hi = dash - 1;
  while (hi > 0 && !/Form Type/i.test(lines[hi])) hi--;
  const header = lines.slice(hi, dash).join(' ');
  const rows: IndexEntry[] = [];
  const rejects: RowReject[] = [];
  const body = lines.slice(dash + 1);
  const pipe = /\|/.test(lines[hi]);
  const kind: ParsedIndex['kind'] = pipe ? 'master' : /^\s*Company Name/i.test(lines[hi]) ? 'company' : 'form';
  let cols: Array<[string, number]> = [];
  if (!pipe) {
    const h = lines[hi];
    const names = ['Form Type', 'Company Name', 'CIK', 'Date Filed', 'File Name'];
    const wrapped = hi < dash - 1 ? lines[dash - 1] : '';
    cols = names.map((n) => {
      let at = h.indexOf(n);
      if (at < 0 && wrapped.includes(n)) at = h.length + 1 + wrapped.indexOf(n); // company.idx: second header line continues
      return [n, at] as [string, number];
    });
    if (kind === 'company') {
      // company.idx writes "Date Filed  File Name" on a wrapped line but the data is on one line, after CIK.
      const cik = cols.find((c) => c[0] === 'CIK')![1];
      cols = cols.map(([n, at]) => [n, n === 'Date Filed' ? cik + 12 : n === 'File Name' ? cik + 24 : at]);
    }
    if (cols.some(([, at]) => at < 0)) throw new ParseError(`index header lacks columns: ${header.trim()}`, { file, line: hi + 1 });
  }
  body.forEach((l, i) => {
    const line = dash + 2 + i;
    if (!l.trim()) return;
    let r: IndexEntry | string;
    if (pipe) {
      const f = l.split('|');
      r =
        f.length !== 5
          ? `expected 5 pipe-delimited fields, found ${f.length}`
          : validate(f[0].trim(), f[1].trim(), f[2].trim(), f[3].trim(), f[4].trim());
    } else {
      const sorted = [...cols].sort((a, b) => a[1] - b[1]);
      const v: Record<string, string> = {};
      sorted.forEach(([n, at], k) => {
        v[n] = l.slice(at, k + 1 < sorted.length ? sorted[k + 1][1] : undefined).trim();
      });
      r = validate(v.CIK, v['Company Name'], v['Form Type'], v['Date Filed'], v['File Name']);
    }
    if (typeof r === 'string') rejects.push({ line, reason: r, raw: l.slice(0, 300) });
    else rows.push(r);
  });
  if (rows.length === 0 && rejects.length === 0)
    throw new ParseError('index file has a header but no rows (empty day?)', { file, line: dash + 1 });
  return { kind, rows, rejects };
}
