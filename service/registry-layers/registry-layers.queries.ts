/**
 * Registry layer queries, transport-free (HTTP routes and MCP tools call
 * these): layer 1 profile, layer 2 timeline, layer 3 filings, earnings
 * calendar, people, person careers and signals. Every data-bearing response
 * carries `origin` (the leaf of the company's submissions record, or of the
 * first row) and every row its own `origin` leaf; `schema` ids end in /v1.
 */
import { decodeCursor, nextCursorOf } from '../platform/pagination.ts';
import { InvalidInputError, NotFoundError } from '../../lib/errors.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { SIGNAL_PATTERNS, type SignalType } from '../../ingest/edgar/signals.ts';
import { clampLimit } from '../platform/http.ts';
import { COMPANY_SCHEMA_ID, findCompany, type CompanyRecord } from '../company/company.queries.ts';

export const PERSON_SCHEMA_ID = 'proofline/sec-person/v1';
export const SIGNALS_SCHEMA_ID = 'proofline/sec-signals/v1';

const sql = (f: string) => loadSql(`./${f}`, import.meta.url);
const Q = {
  profileFacts: sql('profile-facts.sql'),
  metrics: sql('company-metrics.sql'),
  people: sql('company-people.sql'),
  affiliations: sql('affiliations.sql'),
  timeline: sql('company-timeline.sql'),
  timelineCounts: sql('company-timeline-counts.sql'),
  filings: sql('company-filings.sql'),
  filingsCount: sql('company-filings-count.sql'),
  earnings: sql('company-earnings.sql'),
  recent8k: sql('recent-8ks.sql'),
  person: sql('find-person.sql'),
  signalIndex: sql('signal-index.sql'),
  signals: sql('list-signals.sql'),
  signalsCount: sql('count-signals.sql'),
};

function parseJson(v: unknown): unknown {
  if (typeof v !== 'string') return v ?? null;
  try {
    return JSON.parse(v);
  } catch {
    return null;
  }
}

/** Rows with their `origin` JSON text parsed (a row without a leaf gets `origin: null`). */
function withOrigin(rows: Row[]): Array<Record<string, unknown>> {
  return rows.map((r) => {
    const o = parseJson(r.origin) as Record<string, unknown> | null;
    return { ...r, origin: o?.leaf_hash ? o : null };
  });
}

/**
 * How the rows of the token-budgeted layers (1, about 800 tokens; 2, about
 * 2000) carry provenance. A full leaf is ~10 members and ~500 characters, more
 * than most rows' data, so by default (`hash`) a row carries only its leaf's
 * hash in `origin_leaf`: `GET /api/verify/{origin_leaf}` returns the leaf, its
 * parent chain and a signed receipt. `full` puts the whole leaf in `origin`,
 * for clients that check leaves offline. The response's own `origin` is
 * always the full leaf.
 */
export type RowOrigins = 'hash' | 'full';
export const ROW_ORIGINS_NOTE =
  'rows carry origin_leaf (a leaf hash): GET /api/verify/{origin_leaf} returns the leaf, its chain and a signed receipt; ?origins=full puts each whole leaf in origin';

function rowOrigin(origin: unknown, mode: RowOrigins): { origin: unknown } | { origin_leaf: string | null } {
  if (mode === 'full') return { origin };
  const h = (origin as { leaf_hash?: unknown } | null)?.leaf_hash;
  return { origin_leaf: typeof h === 'string' ? h : null };
}

function companyHead(c: CompanyRecord, layer: number | null) {
  return {
    schema: COMPANY_SCHEMA_ID,
    ...(layer === null ? {} : { layer }),
    ticker: String(c.ticker),
    name: String(c.name),
    cik: Number(c.cik),
    status: c.status ?? null,
  };
}

function companyOrigin(c: CompanyRecord, rows: Array<Record<string, unknown>> = []): unknown {
  return parseJson(c.origin) ?? rows.find((r) => r.origin)?.origin ?? null;
}

/** Layer 1 (~800 tokens): people, products, partnerships, affiliations and key facts; rows' provenance per `origins` (RowOrigins). */
export async function getCompanyProfile(registry: SnapshotReader, ref: string, opts: { origins?: RowOrigins } = {}) {
  const mode = opts.origins ?? 'hash';
  const c = await findCompany(registry, ref);
  const cik = Number(c.cik);
  const [facts, metrics, people, affiliations] = await Promise.all([
    registry.query(Q.profileFacts, { cik }).then(withOrigin),
    registry.query(Q.metrics, { cik }).then(withOrigin),
    registry.query(Q.people, { cik }).then(withOrigin),
    registry.query(Q.affiliations, { cik }),
  ]);
  const latestAcc = facts[0]?.accession ?? null;
  const latest = facts.filter((f) => f.accession === latestAcc);
  const employees = latest.find((f) => f.fact_type === 'employees');
  const metric = (m: string) => {
    const x = metrics.find((r) => r.metric === m);
    return x
      ? {
          value: Number(x.value),
          unit: x.unit,
          as_of: x.period_end,
          concept: `${x.taxonomy}:${x.concept}`,
          form: x.form,
          filed: x.filed,
          accession: x.accession,
          is_amendment: x.is_amendment,
          ...rowOrigin(x.origin, mode),
        }
      : null;
  };
  return {
    ...companyHead(c, 1),
    key_facts: {
      employees: employees
        ? {
            value: Number(employees.numeric_value),
            evidence: employees.evidence,
            accession: employees.accession,
            ...rowOrigin(employees.origin, mode),
          }
        : null,
      shares_outstanding: metric('shares_outstanding'),
      public_float: metric('public_float'),
      revenue: metric('revenue'),
      net_income: metric('net_income'),
    },
    people: people.slice(0, 15).map((p) => ({
      name: p.person_name,
      role: p.role,
      role_type: p.role_type,
      since: p.first_seen,
      last_seen: p.last_seen,
      ...rowOrigin(p.origin, mode),
    })),
    products: latest
      .filter((f) => f.fact_type === 'product')
      .map((f) => ({ name: f.value, evidence: f.evidence, accession: f.accession, ...rowOrigin(f.origin, mode) })),
    partnerships: latest
      .filter((f) => f.fact_type === 'partnership')
      .map((f) => ({ partner: f.value, evidence: f.evidence, accession: f.accession, ...rowOrigin(f.origin, mode) })),
    affiliations: affiliations.map((a) => ({
      person: a.person_name,
      company: a.company_name,
      ticker: a.ticker,
      role: a.role,
      role_type: a.role_type,
      last_seen: a.last_seen,
    })),
    ...(mode === 'hash' ? { origins_note: ROW_ORIGINS_NOTE } : {}),
    origin: companyOrigin(c, [...facts, ...metrics]),
  };
}

/** Layer 2 (~2000 tokens): acquisitions, launches, leadership changes, financial milestones from 8-K items; rows' provenance per `origins` (RowOrigins). */
export async function getCompanyTimeline(registry: SnapshotReader, ref: string, opts: { limit?: number; origins?: RowOrigins } = {}) {
  const mode = opts.origins ?? 'hash';
  const c = await findCompany(registry, ref);
  const cik = Number(c.cik);
  const { limit, clamped } = clampLimit(opts.limit, 20, 200);
  const [events, counts] = await Promise.all([
    registry.query(Q.timeline, { cik, limit }).then(withOrigin),
    registry.query(Q.timelineCounts, { cik }),
  ]);
  return {
    ...companyHead(c, 2),
    counts: Object.fromEntries(counts.map((r) => [String(r.event_type), Number(r.n)])),
    events: events.map((e) => ({
      date: e.event_date ?? e.filing_date,
      filing_date: e.filing_date,
      type: e.event_type,
      item: e.item,
      title: e.title,
      summary: e.summary,
      accession: e.accession,
      form: e.form,
      document_url: e.document_url,
      basis: e.basis,
      ...rowOrigin(e.origin, mode),
    })),
    ...(clamped ? { limit_clamped: clamped } : {}),
    ...(mode === 'hash' ? { origins_note: ROW_ORIGINS_NOTE } : {}),
    origin: companyOrigin(c, events),
  };
}

export const FILING_FORMS = ['10-K', '10-Q', '8-K'] as const;

/** Layer 3: the filing index with EDGAR URLs and extraction status; `form` is 10-K, 10-Q or 8-K (amendments included). */
export async function getCompanyFilings(
  registry: SnapshotReader,
  ref: string,
  opts: { form?: string; limit?: number; cursor?: string } = {},
) {
  const form = opts.form ? opts.form.toUpperCase() : null;
  if (form && !(FILING_FORMS as readonly string[]).includes(form)) {
    throw new InvalidInputError(`invalid parameter 'form': must be one of ${FILING_FORMS.join(', ')}`, { response: { parameter: 'form' } });
  }
  const c = await findCompany(registry, ref);
  const cik = Number(c.cik);
  const { limit, clamped } = clampLimit(opts.limit, 100, 1000);
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(opts.cursor, snapshotId);
  const [rows, count] = await Promise.all([
    registry.query(Q.filings, { cik, form, limit, offset }).then(withOrigin),
    registry.query(Q.filingsCount, { cik, form }),
  ]);
  const total = Number(count[0]?.n ?? 0);
  return {
    ...companyHead(c, 3),
    form,
    total,
    returned: rows.length,
    filings: rows,
    ...(clamped ? { limit_clamped: clamped } : {}),
    origin: companyOrigin(c, rows),
    next_cursor: nextCursorOf(offset, rows.length, total, snapshotId),
  };
}

/** Confirmed (8-K 2.02) and predicted earnings dates, with the recent 8-Ks. */
export async function getCompanyEarnings(registry: SnapshotReader, ref: string) {
  const c = await findCompany(registry, ref);
  const cik = Number(c.cik);
  const [rows, recent] = await Promise.all([
    registry.query(Q.earnings, { cik }).then(withOrigin),
    registry.query(Q.recent8k, { cik, limit: 10 }).then(withOrigin),
  ]);
  const shape = (e: Record<string, unknown>) => ({
    date: e.event_date,
    confirmed: Boolean(e.confirmed),
    timing: e.timing,
    timing_established: e.timing_established,
    acceptance_et: e.acceptance_et,
    timing_basis: e.timing_basis,
    acceptance_check: e.acceptance_check,
    confidence: Number(e.confidence),
    basis: e.basis,
    accession: e.accession,
    document_url: e.document_url,
    origin: e.origin,
  });
  return {
    ...companyHead(c, null),
    timing_legend: {
      BMO: 'accepted before 09:30 ET',
      AMC: 'accepted at or after 16:00 ET',
      DMH: 'accepted during market hours',
      unknown: 'no acceptance time',
    },
    // How each row's timing is known (issue 26): only `uncertain` rows carry a guessed BMO/AMC/DMH.
    timing_established_legend: {
      sgml_header: "acceptance time from the filing's SGML header (Eastern, authoritative)",
      acceptance_utc_proven: 'submissions acceptanceDateTime proven to be UTC (outside 06:00-22:00 ET, or 17:30+ on its filing date)',
      acceptance_eastern_proven: 'submissions acceptanceDateTime proven to be Eastern time labelled Z (17:30+ with a later filing date)',
      both_readings_agree: 'label not proven, but read as UTC and as Eastern it gives the same timing',
      uncertain: "label not proven and the two readings disagree: timing is the company's majority reading, a guess",
      unknown: 'no acceptance time',
      history: 'predicted row: the most common timing of past confirmed dates',
    },
    predicted: rows.filter((e) => !e.confirmed).map(shape),
    confirmed: rows
      .filter((e) => e.confirmed)
      .slice(0, 12)
      .map(shape),
    confirmed_total: rows.filter((e) => e.confirmed).length,
    recent_8ks: recent,
    origin: companyOrigin(c, rows),
  };
}

/** Executives and board members of one company. */
export async function getCompanyPeople(registry: SnapshotReader, ref: string) {
  const c = await findCompany(registry, ref);
  const rows = await registry.query(Q.people, { cik: Number(c.cik) }).then(withOrigin);
  const shape = (p: Record<string, unknown>) => ({
    name: p.person_name,
    role: p.role,
    role_type: p.role_type,
    first_seen: p.first_seen,
    last_seen: p.last_seen,
    accession: p.accession,
    source: p.source_kind,
    origin: p.origin,
  });
  return {
    ...companyHead(c, null),
    executives: rows.filter((p) => p.role_type === 'officer' || p.role_type === 'executive_officer').map(shape),
    board: rows.filter((p) => p.role_type === 'director').map(shape),
    owners: rows.filter((p) => p.role_type === 'ten_percent_owner' || p.role_type === 'other').map(shape),
    origin: companyOrigin(c, rows),
  };
}

/** Careers of the people whose name contains `name` (case-insensitive), across companies; 404 when none. */
export async function getPerson(registry: SnapshotReader, name: string) {
  // Compared as find-person.sql compares names: no case, no punctuation.
  const q = decodeURIComponent(name)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (q.length < 2)
    throw new InvalidInputError("invalid parameter 'name': give at least 2 letters or digits", { response: { parameter: 'name' } });
  const rows = withOrigin(await registry.query(Q.person, { q }));
  if (rows.length === 0)
    throw new NotFoundError(`no person matching '${q}'`, {
      response: { name: q, hint: 'names come from Forms 3/4/5 and 10-K executive lists; try a last name' },
    });
  const byKey = new Map<string, Array<Record<string, unknown>>>();
  for (const r of rows) byKey.set(String(r.person_key), [...(byKey.get(String(r.person_key)) ?? []), r]);
  // The best match: the person with the most roles among those one of whose names is exactly q, else among all.
  const exact = (g: Array<Record<string, unknown>>) => Number(g.some((r) => r.name_key === q));
  const groups = [...byKey.values()].sort((a, b) => exact(b) - exact(a) || b.length - a.length);
  const main = groups[0];
  const companies = new Set(main.map((r) => r.cik));
  const career = main.map((r) => ({
    company: r.company_name,
    ticker: r.ticker,
    cik: r.cik,
    role: r.role,
    role_type: r.role_type,
    period: { from: r.first_seen, to: r.last_seen },
    accession: r.accession,
    source: r.source_kind,
    origin: r.origin,
  }));
  return {
    schema: PERSON_SCHEMA_ID,
    person: {
      name: main[0].person_name,
      cik: main[0].person_cik ?? null,
      notes: `${career.length} role${career.length === 1 ? '' : 's'} at ${companies.size} compan${companies.size === 1 ? 'y' : 'ies'}, from ${[...new Set(main.map((r) => r.source_kind))].map((s) => (s === 'ownership' ? 'Forms 3/4/5' : '10-K executive lists')).join(' and ')}`,
    },
    career,
    other_matches: groups
      .slice(1, 11)
      .map((g) => ({ name: g[0].person_name, roles: g.length, companies: [...new Set(g.map((r) => r.ticker ?? r.company_name))] })),
    origin: career[0].origin,
  };
}

export interface SignalQuery {
  ticker?: string;
  type?: string;
  exchange?: string;
  also?: string;
  min_strength?: number;
  limit?: number;
  /** `next_cursor` of the previous page (service/platform/pagination.ts). */
  cursor?: string;
}

const SIGNAL_TYPES = [...new Set(SIGNAL_PATTERNS.map((p) => p.type))];
const STRENGTH_SCALE = {
  1: 'weak: real but hedged (may, could, might) or presupposed by a risk statement; hypothetical mentions are not hits',
  2: "moderate: direct statement about the company's own activity, plan or exposure",
  3: 'strong: quantified ($ or %) or repeated in 3+ sentences',
};

function checkType(name: string, v: string | undefined): SignalType | null {
  if (v === undefined) return null;
  if (!(SIGNAL_TYPES as string[]).includes(v))
    throw new InvalidInputError(`invalid parameter '${name}': must be one of ${SIGNAL_TYPES.join(', ')}`, {
      response: { parameter: name },
    });
  return v as SignalType;
}

/** Signals: with no filter, the index of signal types with counts; else the matching hits. */
export async function listSignals(registry: SnapshotReader, q: SignalQuery) {
  const type = checkType('type', q.type);
  const also = checkType('also', q.also);
  if (also && !type)
    throw new InvalidInputError("invalid parameter 'also': needs 'type' (companies having both signals)", {
      response: { parameter: 'also' },
    });
  const filtered = q.ticker !== undefined || type || q.exchange !== undefined || q.min_strength !== undefined;
  if (!filtered) {
    const idx = await registry.query(Q.signalIndex);
    return {
      schema: SIGNALS_SCHEMA_ID,
      strength_scale: STRENGTH_SCALE,
      types: SIGNAL_PATTERNS.map((p) => {
        const r = idx.find((x) => x.signal_type === p.type);
        // How far a hit of this type can be trusted: precision and recall measured by `npm run eval` on real 10-Ks
        // (docs/signal-labelling-rules.md), with the number of served hits they rest on (issue 26).
        const measured = {
          precision: p.measured.precision,
          recall: p.measured.recall,
          evaluated_hits: p.measured.hits,
          as_of: p.measured.as_of,
          method: 'docs/signal-labelling-rules.md',
        };
        return {
          type: p.type,
          description: p.description,
          sections: p.sections.map((s) => `Item ${s}`),
          hits: Number(r?.hits ?? 0),
          companies: Number(r?.companies ?? 0),
          avg_strength: r ? Number(r.avg_strength) : null,
          measured,
          example: `/api/signals?type=${p.type}`,
        };
      }),
      origin: null,
    };
  }
  const { limit, clamped } = clampLimit(q.limit, 50, 200);
  const params = {
    ticker: q.ticker ? q.ticker.toUpperCase().replace(/\./g, '-') : null,
    type,
    exchange: q.exchange ?? null,
    also,
    min_strength: q.min_strength ?? null,
  };
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(q.cursor, snapshotId);
  const [rows, count] = await Promise.all([
    registry.query(Q.signals, { ...params, limit, offset }).then(withOrigin),
    registry.query(Q.signalsCount, params),
  ]);
  const total = Number(count[0]?.n ?? 0);
  return {
    schema: SIGNALS_SCHEMA_ID,
    query: { ...params, limit },
    strength_scale: STRENGTH_SCALE,
    total,
    returned: rows.length,
    signals: rows,
    ...(clamped ? { limit_clamped: clamped } : {}),
    origin: rows[0]?.origin ?? null,
    next_cursor: nextCursorOf(offset, rows.length, total, snapshotId),
  };
}
