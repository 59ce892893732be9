/**
 * XBRL company facts (`CIK##########.json`, optionally gzip) into the key
 * metrics of a company: shares outstanding, public float, revenue, net income
 * (and employees when a filer tags it). Facts repeat across filings, so each
 * metric is picked by its latest period end, then latest `filed`, then
 * accession; amendments (`/A` forms) are flagged and used only when no
 * original reports that period.
 *
 * Shares outstanding: `dei:EntityCommonStockSharesOutstanding` (cover page),
 * falling back to `us-gaap:CommonStockSharesOutstanding` where companyfacts
 * lacks the dei fact (multi-class issuers such as Alphabet: companyfacts has
 * no dimensional facts). Foreign filers report under `ifrs-full`.
 */
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { ParseError } from '../../lib/errors.ts';
import { normalizeCik } from './cik.ts';
import { parseJsonBytes } from './json-bytes.ts';

const factSchema = z
  .object({
    start: z.string().optional(),
    end: z.string(),
    val: z.number(),
    accn: z.string(),
    fy: z.number().nullish(),
    fp: z.string().nullish(),
    form: z.string(),
    filed: z.string(),
    frame: z.string().optional(),
  })
  .loose();
const fileSchema = z
  .object({
    cik: z.union([z.number(), z.string()]),
    entityName: z.string().nullish(),
    facts: z.record(
      z.string(),
      z.record(z.string(), z.object({ label: z.string().nullish(), units: z.record(z.string(), z.array(z.unknown())) }).loose()),
    ),
  })
  .loose();

export type MetricName = 'shares_outstanding' | 'public_float' | 'revenue' | 'net_income' | 'employees';

/** Candidate concepts per metric, in order of preference. */
export const METRIC_CONCEPTS: Record<MetricName, Array<[taxonomy: string, concept: string]>> = {
  shares_outstanding: [
    ['dei', 'EntityCommonStockSharesOutstanding'],
    ['us-gaap', 'CommonStockSharesOutstanding'],
    ['ifrs-full', 'NumberOfSharesOutstanding'],
  ],
  public_float: [['dei', 'EntityPublicFloat']],
  revenue: [
    ['us-gaap', 'RevenueFromContractWithCustomerExcludingAssessedTax'],
    ['us-gaap', 'Revenues'],
    ['us-gaap', 'SalesRevenueNet'],
    ['ifrs-full', 'Revenue'],
    ['ifrs-full', 'RevenueFromContractsWithCustomers'],
  ],
  net_income: [
    ['us-gaap', 'NetIncomeLoss'],
    ['us-gaap', 'ProfitLoss'],
    ['ifrs-full', 'ProfitLoss'],
    ['ifrs-full', 'ProfitLossAttributableToOwnersOfParent'],
  ],
  employees: [['dei', 'EntityNumberOfEmployees']],
};

export interface FactRow {
  cik: number;
  entity_name: string | null;
  metric: MetricName;
  taxonomy: string;
  concept: string;
  unit: string;
  value: number;
  period_start: string | null;
  period_end: string;
  /** Annual (FY, duration ~1 year), quarterly, or instant values. */
  period_kind: 'instant' | 'annual' | 'quarter' | 'other';
  accession: string;
  form: string;
  filed: string;
  fy: number | null;
  fp: string | null;
  frame: string | null;
  is_amendment: boolean;
  /** True for concepts other than the first choice (e.g. the us-gaap shares fallback). */
  is_fallback: boolean;
}

export interface ParsedCompanyFacts {
  cik: number;
  entity_name: string | null;
  taxonomies: string[];
  /** The picked value per metric (annual for flows, latest instant for stocks). */
  metrics: FactRow[];
  /**
   * Shares outstanding over time: one fact per period end (picked among the candidates of that period end by the
   * same rules as `pickLatest`), oldest first. Its last row is the `shares_outstanding` entry of `metrics`. Lets a
   * reader take the count as of a date (market cap of a past quote) instead of the latest one.
   */
  share_history: FactRow[];
}

/** Periodic reports whose facts describe the filer (proxy pay-versus-performance tables do not count). */
const PERIODIC_FORMS = /^(10-K|10-Q|20-F|40-F|10-KT|10-QT|8-K|6-K)(\/A)?$/;

function days(a: string, b: string): number {
  return (Date.parse(b) - Date.parse(a)) / 86_400_000;
}

/** Decodes bytes that may be gzip (magic 1f 8b) or plain JSON. */
export function decodeMaybeGzip(bytes: Uint8Array): Uint8Array {
  return bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
}

export function parseCompanyFacts(input: Uint8Array | string, file: string): ParsedCompanyFacts {
  const bytes = typeof input === 'string' ? input : decodeMaybeGzip(input);
  const parsed = fileSchema.safeParse(parseJsonBytes(bytes, file));
  if (!parsed.success)
    throw new ParseError(`not an XBRL companyfacts file: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`, {
      file,
    });
  const f = parsed.data;
  let cik: number;
  try {
    cik = normalizeCik(f.cik);
  } catch (e) {
    throw new ParseError((e as Error).message, { file });
  }
  const metrics: FactRow[] = [];
  let shareHistory: FactRow[] = [];
  for (const [metric, candidates] of Object.entries(METRIC_CONCEPTS) as Array<[MetricName, Array<[string, string]>]>) {
    // Filers switch concepts over the years (NVIDIA: RevenueFromContract… until FY2022, Revenues after), so all
    // candidates compete on period end; on a tie the earlier candidate wins.
    const all: FactRow[] = [];
    for (const [i, [tax, concept]] of candidates.entries()) {
      const c = f.facts[tax]?.[concept];
      if (!c) continue;
      for (const [unit, list] of Object.entries(c.units)) {
        for (const raw of list) {
          const r = factSchema.safeParse(raw);
          if (!r.success || !PERIODIC_FORMS.test(r.data.form)) continue;
          const x = r.data;
          const dur = x.start ? days(x.start, x.end) : 0;
          const kind = !x.start ? 'instant' : dur > 340 && dur < 390 ? 'annual' : dur > 80 && dur < 100 ? 'quarter' : 'other';
          all.push({
            cik,
            entity_name: f.entityName ?? null,
            metric,
            taxonomy: tax,
            concept,
            unit,
            value: x.val,
            period_start: x.start ?? null,
            period_end: x.end,
            period_kind: kind,
            accession: x.accn,
            form: x.form,
            filed: x.filed,
            fy: x.fy ?? null,
            fp: x.fp ?? null,
            frame: x.frame ?? null,
            is_amendment: /\/A$/.test(x.form),
            is_fallback: i > 0,
          });
        }
      }
    }
    const flow = metric === 'revenue' || metric === 'net_income';
    const wanted = all.filter((r) => (flow ? r.period_kind === 'annual' : r.period_kind === 'instant'));
    const pool = wanted.length ? wanted : all;
    const pick = pickLatest(pool);
    if (pick) metrics.push(pick);
    if (metric === 'shares_outstanding') {
      const byEnd = new Map<string, FactRow[]>();
      for (const r of pool) byEnd.set(r.period_end, [...(byEnd.get(r.period_end) ?? []), r]);
      shareHistory = [...byEnd.keys()].sort().map((end) => pickLatest(byEnd.get(end)!)!);
    }
  }
  return { cik, entity_name: f.entityName ?? null, taxonomies: Object.keys(f.facts), metrics, share_history: shareHistory };
}

/** Latest period end; within it originals before amendments, then latest filed, then accession. */
export function pickLatest(rows: FactRow[]): FactRow | null {
  let best: FactRow | null = null;
  for (const r of rows) {
    if (!best) {
      best = r;
      continue;
    }
    const cmp =
      r.period_end.localeCompare(best.period_end) ||
      Number(best.is_amendment) - Number(r.is_amendment) ||
      Number(best.is_fallback) - Number(r.is_fallback) ||
      r.filed.localeCompare(best.filed) ||
      r.accession.localeCompare(best.accession);
    if (cmp > 0) best = r;
  }
  return best;
}
