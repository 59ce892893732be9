/**
 * Parses the SEC ticker files. They list *current* listings only; one CIK can
 * carry many tickers (Fannie Mae 16, preferreds like `TWO-PA`), and `exchange`
 * can be null. Bytes in, rows out; malformed rows are rejected, a malformed
 * file throws ParseError.
 */
import { ParseError } from '../../lib/errors.ts';
import { normalizeCik, padCik } from './cik.ts';
import { tickersExchangeFileSchema, tickersFileSchema, type TickerRow } from './edgar.schema.ts';
import { parseJsonBytes, type RowReject } from './json-bytes.ts';

export interface ParsedTickers {
  format: 'company_tickers_exchange' | 'company_tickers';
  rows: TickerRow[];
  rejects: RowReject[];
}

export function parseTickers(bytes: Uint8Array | string, file: string): ParsedTickers {
  const json = parseJsonBytes(bytes, file);
  const rejects: RowReject[] = [];
  const rows: TickerRow[] = [];
  const exch = tickersExchangeFileSchema.safeParse(json);
  if (exch.success) {
    const idx = (f: string) => exch.data.fields.indexOf(f);
    const [ci, ni, ti, ei] = [idx('cik'), idx('name'), idx('ticker'), idx('exchange')];
    if (ci < 0 || ti < 0) throw new ParseError('ticker file lacks cik/ticker fields', { file });
    exch.data.data.forEach((r, i) => {
      try {
        const cik = normalizeCik(r[ci] as number);
        const ticker = String(r[ti] ?? '')
          .trim()
          .toUpperCase();
        if (!ticker) throw new Error('empty ticker');
        rows.push({
          cik,
          cik_padded: padCik(cik),
          ticker,
          name: String(r[ni] ?? ''),
          exchange: ei >= 0 && r[ei] != null ? String(r[ei]) : null,
          rank: i,
        });
      } catch (e) {
        rejects.push({ line: null, pointer: `/data/${i}`, reason: (e as Error).message, raw: JSON.stringify(r) });
      }
    });
    return { format: 'company_tickers_exchange', rows, rejects };
  }
  const plain = tickersFileSchema.safeParse(json);
  if (!plain.success) throw new ParseError(`not an SEC ticker file: ${plain.error.issues[0]?.message ?? 'unknown shape'}`, { file });
  Object.entries(plain.data)
    .sort(([a], [b]) => Number(a) - Number(b))
    .forEach(([k, r], i) => {
      try {
        const cik = normalizeCik(r.cik_str);
        rows.push({ cik, cik_padded: padCik(cik), ticker: r.ticker.trim().toUpperCase(), name: r.title, exchange: null, rank: i });
      } catch (e) {
        rejects.push({ line: null, pointer: `/${k}`, reason: (e as Error).message, raw: JSON.stringify(r) });
      }
    });
  return { format: 'company_tickers', rows, rejects };
}

/** The snapshot date of a ticker file: `company_tickers_exchange.2023-05.json` → `2023-05-01`, else `fallback`. */
export function tickerSnapshotDate(fileName: string, fallback: string): string {
  const m = /\.(\d{4}-\d{2}(?:-\d{2})?)\.json$/.exec(fileName);
  if (!m) return fallback;
  return m[1].length === 7 ? `${m[1]}-01` : m[1];
}
