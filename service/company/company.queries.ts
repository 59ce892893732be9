/**
 * Company queries, transport-free: HTTP routes and MCP tools call these.
 */
import { NotFoundError, InvalidInputError } from '../../lib/errors.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';

const FIND = loadSql('./find-company.sql', import.meta.url);
const HINTS = loadSql('./company-hints.sql', import.meta.url);

export const COMPANY_SCHEMA_ID = 'proofline/sec-company/v1';

export interface CompanyRef {
  ticker: string | null;
  cik: number | null;
}

/** Parses a path segment as a ticker (`AAPL`, `BRK-B`, `TWO-PA`) or a CIK (`320193`, `0000320193`, `CIK0000320193`). */
export function parseCompanyRef(raw: string): CompanyRef {
  const s = decodeURIComponent(raw).trim();
  const cik = /^(?:CIK)?(\d{1,10})$/i.exec(s);
  if (cik) return { ticker: null, cik: Number(cik[1]) };
  if (!/^[A-Za-z0-9][A-Za-z0-9.\-]{0,14}$/.test(s))
    throw new InvalidInputError(`'${s}' is not a ticker or CIK`, { response: { parameter: 'ticker' } });
  return { ticker: s.toUpperCase().replace(/\./g, '-'), cik: null };
}

export type CompanyRecord = Record<string, unknown>;

/** Finds a company by ticker or CIK, or throws NotFoundError with close matches as `hint`. */
export async function findCompany(registry: SnapshotReader, raw: string): Promise<CompanyRecord> {
  const ref = parseCompanyRef(raw);
  const rows = await registry.query(FIND, { ticker: ref.ticker, cik: ref.cik });
  if (rows[0]) return rows[0];
  const q = (ref.ticker ?? String(ref.cik)).toUpperCase();
  const hints = ref.ticker ? await registry.query(HINTS, { q }) : [];
  const hint = hints.filter((h) => Number(h.score) > 0.7).map((h) => `${h.ticker} (${h.name})`);
  throw new NotFoundError(`no company with ticker or CIK '${q}'`, {
    response: { ticker: q, hint: hint.length ? `did you mean ${hint.join(', ')}?` : 'search by name at /api/search?q=...' },
  });
}

function parseJson<T>(v: unknown): T | null {
  if (v == null) return null;
  if (typeof v !== 'string') return v as T;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}

function titleCase(s: string | null | undefined): string | null {
  if (!s) return null;
  return s.toLowerCase().replace(/\b[a-z]/g, (c) => c.toUpperCase());
}

/** Layer 0: the identity card (about 200 tokens). */
export function buildIdentityCard(c: CompanyRecord, baseUrl: string) {
  const addr = parseJson<Record<string, string | null>>(c.business_address);
  const headquarters = addr ? [titleCase(addr.city), addr.state_or_country].filter(Boolean).join(', ') || null : null;
  const ticker = String(c.ticker);
  const name = String(c.name);
  const parts = [
    `${name} (${c.exchange ? `${c.exchange}: ` : ''}${ticker}) is ${c.status === 'active' ? 'an SEC registrant' : `a ${c.status} SEC registrant`}`,
    c.sic_description ? ` in ${String(c.sic_description).toLowerCase()} (SIC ${c.sic})` : '',
    headquarters ? `, headquartered in ${headquarters}` : '',
    c.state_of_incorporation ? `, incorporated in ${c.state_of_incorporation_description ?? c.state_of_incorporation}` : '',
    '.',
  ];
  const tags = [
    c.sic_description ? String(c.sic_description).toLowerCase() : null,
    c.exchange ? String(c.exchange).toLowerCase() : null,
    c.category ? String(c.category).toLowerCase() : null,
    c.status as string,
  ].filter((x): x is string => Boolean(x));
  const self = `${baseUrl}/api/company/${encodeURIComponent(ticker)}`;
  return {
    schema: COMPANY_SCHEMA_ID,
    layer: 0,
    identity: {
      name,
      cik: Number(c.cik),
      cik_padded: c.cik_padded,
      ticker,
      exchange: c.exchange ?? null,
      sic: c.sic ?? null,
      sic_description: c.sic_description ?? null,
      state_of_incorporation: c.state_of_incorporation ?? null,
      headquarters,
      fiscal_year_end: c.fiscal_year_end ?? null,
      status: c.status,
      status_reason: c.status_reason,
    },
    summary: parts.join(''),
    // employees: the latest 10-K Item 1 figure (registry profile_facts); market cap needs quotes (filled by that layer).
    peak_metrics: { market_cap_usd: null as number | null, employees: c.employees == null ? null : Number(c.employees) },
    tags,
    deeper: {
      profile: `${self}/profile`,
      timeline: `${self}/timeline`,
      filings: `${self}/filings`,
    },
    origin: parseJson(c.origin),
  };
}
