/**
 * Registry layer queries, transport-free (HTTP routes and MCP tools call
 * these): layer 1 profile, layer 2 timeline, layer 3 filings, earnings
 * calendar, people, person careers and signals. Every data-bearing response
 * carries `origin` (the leaf of the company's submissions record, or of the
 * first row) and every row its own `origin` leaf; `schema` ids end in /v1.
 */
import { withMembers } from '../../lib/objects.ts';
import { decodeCursor, nextCursorOf } from '../platform/pagination.ts';
import { InvalidInputError, NotFoundError } from '../../lib/errors.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import { textKey } from '../../lib/warehouse/packed-store.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { SIGNAL_PATTERNS, type SignalType } from '../../ingest/edgar/signals.ts';
import { clampLimit } from '../platform/http.ts';
import { PersonNameIndex, type PersonNameEntry } from './person-name-index.ts';
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
  personNames: sql('person-names.sql'),
  personRows: sql('person-rows.sql'),
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
function withOrigin(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return rows.map((r) => {
    const o = parseJson(r.origin) as Record<string, unknown> | null;
    return withMembers(r, { origin: o?.leaf_hash ? o : null });
  });
}

/**
 * The packed per-company record of `cik` in store `name` (jobs/registry/registry-packed.ts: the rows this module's
 * SQL would return for that company, same columns, order and origin leaves), parsed: `undefined` when the served
 * snapshot has no such store (an older snapshot: the SQL path runs), `null` when the company has no rows.
 */
async function packedRecord<T>(registry: SnapshotReader, name: string, cik: number): Promise<T | null | undefined> {
  const store = registry.packed(name);
  if (!store) return undefined;
  const text = await store.get(cik);
  return text === null ? null : (JSON.parse(text) as T);
}

/** Packed rows as withOrigin gives SQL rows: a row whose leaf is missing gets `origin: null`. */
function packedRows(rows: Array<Record<string, unknown>> | undefined): Array<Record<string, unknown>> {
  const out = rows ?? [];
  for (const r of out) if (!(r.origin as { leaf_hash?: unknown } | null)?.leaf_hash) r.origin = null;
  return out;
}

type Rows = Array<Record<string, unknown>>;

/**
 * findCompany (service/company) memoised per served snapshot: a company's identity row changes only when a new
 * snapshot is published, and each company route starts with it. Bounded (dropped whole past 50,000 refs); a miss
 * (404) is not kept. The memo belongs to the reader and is dropped with the snapshot id it was built on.
 */
const companyMemo = new WeakMap<SnapshotReader, { snapshot: string; refs: Map<string, Promise<CompanyRecord>> }>();
const COMPANY_MEMO_MAX = 50_000;
export function findCompanyMemo(registry: SnapshotReader, ref: string): Promise<CompanyRecord> {
  const snapshot = registry.manifest?.snapshot_id;
  if (!snapshot) return findCompany(registry, ref);
  let m = companyMemo.get(registry);
  if (!m || m.snapshot !== snapshot || m.refs.size >= COMPANY_MEMO_MAX) {
    m = { snapshot, refs: new Map() };
    companyMemo.set(registry, m);
  }
  const refs = m.refs;
  let p = refs.get(ref);
  if (!p) {
    p = findCompany(registry, ref);
    refs.set(ref, p);
    p.catch(() => refs.delete(ref));
  }
  return p;
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
  'origin_leaf is a leaf hash: GET /api/verify/{origin_leaf} gives the leaf and a signed receipt; origins=full inlines leaves';

function rowOrigin(origin: unknown, mode: RowOrigins): { origin: unknown } | { origin_leaf: string | null } {
  if (mode === 'full') return { origin };
  const h = (origin as { leaf_hash?: unknown } | null)?.leaf_hash;
  return { origin_leaf: typeof h === 'string' ? h : null };
}

/**
 * `person.notes` (spec 000: a string; search matches people on name or notes): how many roles at which companies,
 * the roles, and where they were read. The search index (service/search/text-index.ts) builds the same text.
 */
export function personNotes(p: { roles: string[]; companies: string[]; sources: string[] }): string {
  const roles = [...new Set(p.roles)];
  const cos = p.companies.filter(Boolean);
  const sources = [...new Set(p.sources)].sort().map((s) => (s === 'ownership' ? 'Forms 3/4/5' : '10-K executive lists'));
  return `${p.roles.length} role${p.roles.length === 1 ? '' : 's'} at ${cos.length} compan${cos.length === 1 ? 'y' : 'ies'} (${cos.slice(0, 5).join(', ')}${cos.length > 5 ? ', ...' : ''}): ${roles.slice(0, 5).join('; ')}${roles.length > 5 ? '; ...' : ''}; from ${sources.join(' and ')}`;
}

/** `career[].period` (spec 000: a string): `YYYY-MM-DD to YYYY-MM-DD`, or the one date when both are the same. */
export function periodText(from: unknown, to: unknown): string {
  const f = from == null ? null : String(from);
  const t = to == null ? null : String(to);
  if (f && t) return f === t ? f : `${f} to ${t}`;
  return f ?? t ?? 'unknown';
}

/** Abbreviations of officer titles, expanded so that two spellings of one role compare equal. */
const ROLE_ABBREVIATIONS: Array<[RegExp, string]> = [
  [/\bceo\b/g, 'chief executive officer'],
  [/\bcfo\b/g, 'chief financial officer'],
  [/\bcoo\b/g, 'chief operating officer'],
  [/\bcto\b/g, 'chief technology officer'],
  [/\bcao\b/g, 'chief accounting officer'],
  [/\bclo\b/g, 'chief legal officer'],
  [/\bgc\b/g, 'general counsel'],
  [/\bevp\b/g, 'executive vice president'],
  [/\bsvp\b/g, 'senior vice president'],
  [/\bvp\b/g, 'vice president'],
  [/\bsr\b/g, 'senior'],
  [/\bexec\b/g, 'executive'],
  [/\bpres\b/g, 'president'],
  [/\bchrm\b|\bchmn\b/g, 'chairman'],
  [/\bdir\b/g, 'director'],
];

const ROLE_KEY_MEMO = 50_000;
const roleKeys = new Map<string, string>();

/**
 * The comparison key of a role title: lower case, `&` as `and`, punctuation dropped, abbreviations expanded
 * ("President and CEO" = "President & Chief Executive Officer" = "president and chief executive officer").
 */
export function roleKey(role: unknown): string {
  const text = String(role ?? '');
  let k = roleKeys.get(text);
  if (k === undefined) {
    // Memoised: role titles repeat across people and requests, and the key's ~30 regular expressions were a tenth
    // of a warm /api/person answer (issue 22). Bounded: dropped whole past ROLE_KEY_MEMO titles.
    if (roleKeys.size >= ROLE_KEY_MEMO) roleKeys.clear();
    roleKeys.set(text, (k = computeRoleKey(text)));
  }
  return k;
}
function computeRoleKey(role: string): string {
  let k = role
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N} ]/gu, ' ');
  for (const [re, full] of ROLE_ABBREVIATIONS) k = k.replace(re, full);
  return k.replace(/\s+/g, ' ').trim();
}

const ROLE_TYPE_RANK: Record<string, number> = { executive_officer: 0, officer: 1, director: 2, ten_percent_owner: 3, other: 4 };

/**
 * One row per person and role (issue 19): rows of the same `person_key` whose roles have the same `roleKey`
 * (a Form 4 "President and CEO" and a 10-K "President and Chief Executive Officer") are merged. The merged row is
 * the row with the fullest spelling of the role (its accession, source and origin), with the longest spelling of
 * the name, the most specific role type, the earliest first_seen and latest last_seen of the group;
 * `also_reported_as` lists the other rows' spellings with their accessions. Order: each group's first row.
 */
export function mergeSameRoles(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const groups = new Map<string, Array<Record<string, unknown>>>();
  for (const r of rows) {
    const k = `${r.person_key ?? r.person_name}|${r.cik ?? ''}|${roleKey(r.role)}`;
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  const longest = (vals: unknown[]) => vals.map((v) => String(v ?? '')).reduce((a, b) => (b.length > a.length ? b : a), '');
  const out: Array<Record<string, unknown>> = [];
  for (const g of groups.values()) {
    if (g.length === 1) {
      out.push(g[0]);
      continue;
    }
    // The row shown is the one with the fullest spelling of the role (its accession, source and origin).
    const shown = g.reduce((a, b) => (String(b.role ?? '').length > String(a.role ?? '').length ? b : a));
    const dates = (key: string) =>
      g
        .map((r) => r[key])
        .filter((v): v is string => v != null)
        .map(String)
        .sort();
    const firsts = dates('first_seen');
    const lasts = dates('last_seen');
    out.push(
      withMembers(shown, {
        person_name: longest(g.map((r) => r.person_name)),
        role_type: g.map((r) => String(r.role_type)).sort((a, b) => (ROLE_TYPE_RANK[a] ?? 9) - (ROLE_TYPE_RANK[b] ?? 9))[0],
        first_seen: firsts[0] ?? null,
        last_seen: lasts[lasts.length - 1] ?? null,
        also_reported_as: g
          .filter((r) => r !== shown)
          .map((r) => ({ name: r.person_name, role: r.role, accession: r.accession, source: r.source_kind })),
      }),
    );
  }
  return out;
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

/**
 * The token-budgeted layers' two sizes (spec 000: profile about 800 tokens, timeline about 2000): the default answer
 * keeps to the budget; `detail=full` adds what it leaves out (evidence sentences, accessions, filing metadata,
 * EDGAR URLs, every person and affiliation). Pinned by test/contract/spec-000.test.ts.
 */
export type LayerDetail = 'default' | 'full';
const PROFILE_DEFAULT = { people: 5, affiliations: 3 };

/** Layer 1 (~800 tokens): people, products, partnerships, affiliations and key facts; rows' provenance per `origins` (RowOrigins). */
export async function getCompanyProfile(registry: SnapshotReader, ref: string, opts: { origins?: RowOrigins; detail?: LayerDetail } = {}) {
  const mode = opts.origins ?? 'hash';
  const full = opts.detail === 'full';
  const c = await findCompanyMemo(registry, ref);
  const cik = Number(c.cik);
  const profile = await packedRecord<{ facts: Rows; metrics: Rows; affiliations: Rows }>(registry, 'registry_profile', cik);
  const packedPeople = await packedRecord<{ people: Rows }>(registry, 'registry_people', cik);
  const [facts, metrics, people, affiliations] = await Promise.all([
    profile !== undefined ? packedRows(profile?.facts) : registry.query(Q.profileFacts, { cik }).then(withOrigin),
    profile !== undefined ? packedRows(profile?.metrics) : registry.query(Q.metrics, { cik }).then(withOrigin),
    (packedPeople !== undefined
      ? Promise.resolve(packedRows(packedPeople?.people))
      : registry.query(Q.people, { cik }).then(withOrigin)
    ).then(mergeSameRoles),
    profile !== undefined ? (profile?.affiliations ?? []) : registry.query(Q.affiliations, { cik }),
  ]);
  const latestAcc = facts[0]?.accession ?? null;
  const latest = facts.filter((f) => f.accession === latestAcc);
  const employees = latest.find((f) => f.fact_type === 'employees');
  const metric = (m: string) => {
    const x = metrics.find((r) => r.metric === m);
    if (!x) return null;
    if (!full) return { value: Number(x.value), as_of: x.period_end, ...rowOrigin(x.origin, mode) };
    return {
      value: Number(x.value),
      unit: x.unit,
      as_of: x.period_end,
      concept: `${x.taxonomy}:${x.concept}`,
      form: x.form,
      filed: x.filed,
      accession: x.accession,
      is_amendment: x.is_amendment,
      ...rowOrigin(x.origin, mode),
    };
  };
  const products = latest.filter((f) => f.fact_type === 'product');
  const partnerships = latest.filter((f) => f.fact_type === 'partnership');
  const shownPeople = people.slice(0, full ? 15 : PROFILE_DEFAULT.people);
  const shownAffiliations = full ? affiliations : affiliations.slice(0, PROFILE_DEFAULT.affiliations);
  return withMembers(companyHead(c, 1), {
    key_facts: {
      employees: employees
        ? {
            value: Number(employees.numeric_value),
            ...(full ? { evidence: employees.evidence, accession: employees.accession } : {}),
            ...rowOrigin(employees.origin, mode),
          }
        : null,
      shares_outstanding: metric('shares_outstanding'),
      public_float: metric('public_float'),
      revenue: metric('revenue'),
      net_income: metric('net_income'),
    },
    people: shownPeople.map((p) => ({
      name: p.person_name,
      role: p.role,
      role_type: p.role_type,
      since: p.first_seen,
      ...(full ? { last_seen: p.last_seen } : {}),
      ...rowOrigin(p.origin, mode),
    })),
    products: products.map((f) => ({
      name: f.value,
      ...(full ? { evidence: f.evidence, accession: f.accession } : {}),
      ...rowOrigin(f.origin, mode),
    })),
    partnerships: partnerships.map((f) => ({
      partner: f.value,
      ...(full ? { evidence: f.evidence, accession: f.accession } : {}),
      ...rowOrigin(f.origin, mode),
    })),
    affiliations: shownAffiliations.map((a) => ({
      person: a.person_name,
      company: a.company_name,
      ticker: a.ticker,
      role: a.role,
      ...(full ? { role_type: a.role_type, last_seen: a.last_seen } : {}),
    })),
    // What the default answer leaves out, and the one parameter that brings it (spec 000: layer 1, about 800 tokens).
    totals: { people: people.length, affiliations: affiliations.length },
    ...(full ? {} : { detail: 'detail=full: evidence, accessions, every person and affiliation' }),
    ...(mode === 'hash' ? { origins_note: ROW_ORIGINS_NOTE } : {}),
    origin: companyOrigin(c, [...facts, ...metrics]),
  });
}

/**
 * Layer 2 (~2000 tokens): acquisitions, launches, leadership changes, financial milestones from 8-K items; rows'
 * provenance per `origins` (RowOrigins). Pages like every list route (platform/pagination.ts): `limit` events from
 * `cursor`, `total` events in all, `next_cursor` null on the last page.
 */
export async function getCompanyTimeline(
  registry: SnapshotReader,
  ref: string,
  opts: { limit?: number; origins?: RowOrigins; detail?: LayerDetail; cursor?: string } = {},
) {
  const mode = opts.origins ?? 'hash';
  const full = opts.detail === 'full';
  const c = await findCompanyMemo(registry, ref);
  const cik = Number(c.cik);
  const { limit, clamped } = clampLimit(opts.limit, 20, 200);
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(opts.cursor, snapshotId);
  const packed = await packedRecord<{ events: Rows; counts: Rows }>(registry, 'registry_timeline', cik);
  const [events, counts] =
    packed !== undefined
      ? [packedRows(packed?.events.slice(offset, offset + limit)), packed?.counts ?? []]
      : await Promise.all([registry.query(Q.timeline, { cik, limit, offset }).then(withOrigin), registry.query(Q.timelineCounts, { cik })]);
  const total = counts.reduce((n, r) => n + Number(r.n), 0);
  return withMembers(companyHead(c, 2), {
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
      ...(full ? { document_url: e.document_url } : {}),
      basis: e.basis,
      ...rowOrigin(e.origin, mode),
    })),
    ...(full ? {} : { detail: "detail=full adds each event's EDGAR document URL; limit= gives more events" }),
    ...(clamped ? { limit_clamped: clamped } : {}),
    ...(mode === 'hash' ? { origins_note: ROW_ORIGINS_NOTE } : {}),
    origin: companyOrigin(c, events),
    total,
    next_cursor: nextCursorOf(offset, events.length, total, snapshotId),
  });
}

export const FILING_FORMS = ['10-K', '10-Q', '8-K'] as const;

/** company-filings.sql's form filter, for the packed rows: the form itself, its amendments (`10-K/A`), and for 10-K also 10-K405 and 10-KT. */
function formMatches(f: unknown, form: string | null): boolean {
  if (form === null) return true;
  if (typeof f !== 'string') return false;
  return f === form || f.startsWith(`${form}/`) || (form === '10-K' && (f === '10-K405' || f === '10-KT'));
}

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
  const c = await findCompanyMemo(registry, ref);
  const cik = Number(c.cik);
  const { limit, clamped } = clampLimit(opts.limit, 100, 1000);
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(opts.cursor, snapshotId);
  const packed = await packedRecord<{ filings: Rows }>(registry, 'registry_filings', cik);
  let rows: Rows;
  let total: number;
  if (packed !== undefined) {
    const matching = (packed?.filings ?? []).filter((f) => formMatches(f.form, form));
    rows = packedRows(matching.slice(offset, offset + limit));
    total = matching.length;
  } else {
    const [found, count] = await Promise.all([
      registry.query(Q.filings, { cik, form, limit, offset }).then(withOrigin),
      registry.query(Q.filingsCount, { cik, form }),
    ]);
    rows = found;
    total = Number(count[0]?.n ?? 0);
  }
  return withMembers(companyHead(c, 3), {
    form,
    total,
    returned: rows.length,
    filings: rows,
    ...(clamped ? { limit_clamped: clamped } : {}),
    origin: companyOrigin(c, rows),
    next_cursor: nextCursorOf(offset, rows.length, total, snapshotId),
  });
}

/**
 * Confirmed (8-K 2.02) and predicted earnings dates, with the recent 8-Ks. The `confirmed` list pages
 * (platform/pagination.ts): `limit` dates a page, newest first (default 12, today's one-page answer), `confirmed_total`
 * over all; `predicted` (the next dates) and `recent_8ks` (the 10 latest 8-Ks; every 8-K pages at
 * /filings?form=8-K) are the same on every page.
 */
export async function getCompanyEarnings(registry: SnapshotReader, ref: string, opts: { limit?: number; cursor?: string } = {}) {
  const c = await findCompanyMemo(registry, ref);
  const cik = Number(c.cik);
  const { limit, clamped } = clampLimit(opts.limit, 12, 200);
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(opts.cursor, snapshotId);
  const packed = await packedRecord<{ earnings: Rows; recent_8ks: Rows }>(registry, 'registry_earnings', cik);
  const [rows, recent] =
    packed !== undefined
      ? [packedRows(packed?.earnings), packedRows(packed?.recent_8ks)]
      : await Promise.all([
          registry.query(Q.earnings, { cik }).then(withOrigin),
          registry.query(Q.recent8k, { cik, limit: 10 }).then(withOrigin),
        ]);
  const confirmed = rows.filter((e) => e.confirmed);
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
  return withMembers(companyHead(c, null), {
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
    confirmed: confirmed.slice(offset, offset + limit).map(shape),
    confirmed_total: confirmed.length,
    recent_8ks: recent,
    origin: companyOrigin(c, rows),
    ...(clamped ? { limit_clamped: clamped } : {}),
    next_cursor: nextCursorOf(offset, confirmed.slice(offset, offset + limit).length, confirmed.length, snapshotId),
  });
}

/** The list of a person row: executives, then board, then owners (the order of the answer's three arrays }). */
const PEOPLE_GROUPS: Record<string, number> = { officer: 0, executive_officer: 0, director: 1, ten_percent_owner: 2, other: 2 };

/**
 * Executives, board members and owners of one company. The roles page (platform/pagination.ts) as one list in the
 * answer's order, executives, then board, then owners (each in the query's order): a page holds `limit` roles
 * (default and max 1000, so today's one-page answer is unchanged) split into the three arrays; `total` counts all.
 */
export async function getCompanyPeople(registry: SnapshotReader, ref: string, opts: { limit?: number; cursor?: string } = {}) {
  const c = await findCompanyMemo(registry, ref);
  const { limit, clamped } = clampLimit(opts.limit, 1000, 1000);
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(opts.cursor, snapshotId);
  const packed = await packedRecord<{ people: Rows }>(registry, 'registry_people', Number(c.cik));
  const all = mergeSameRoles(
    packed !== undefined ? packedRows(packed?.people) : withOrigin(await registry.query(Q.people, { cik: Number(c.cik) })),
  );
  const listed = all
    .map((p, i) => ({ p, i, g: PEOPLE_GROUPS[String(p.role_type)] }))
    .filter((x) => x.g !== undefined)
    .sort((a, b) => a.g! - b.g! || a.i - b.i)
    .map((x) => x.p);
  const rows = listed.slice(offset, offset + limit);
  const shape = (p: Record<string, unknown>) => ({
    name: p.person_name,
    role: p.role,
    role_type: p.role_type,
    first_seen: p.first_seen,
    last_seen: p.last_seen,
    accession: p.accession,
    source: p.source_kind,
    ...(p.also_reported_as ? { also_reported_as: p.also_reported_as } : {}),
    origin: p.origin,
  });
  return withMembers(companyHead(c, null), {
    executives: rows.filter((p) => p.role_type === 'officer' || p.role_type === 'executive_officer').map(shape),
    board: rows.filter((p) => p.role_type === 'director').map(shape),
    owners: rows.filter((p) => p.role_type === 'ten_percent_owner' || p.role_type === 'other').map(shape),
    origin: companyOrigin(c, all),
    total: listed.length,
    ...(clamped ? { limit_clamped: clamped } : {}),
    next_cursor: nextCursorOf(offset, rows.length, listed.length, snapshotId),
  });
}

/**
 * Person keys and comparison names of the served snapshot, built once per snapshot id (person-names.sql: the
 * names computed by DuckDB exactly as find-person.sql computes them) into an n-gram index (person-name-index.ts), so
 * a name search visits only the names that can contain it, instead of normalising every people row in SQL on each
 * request (issue 22: 63 ms at full scale) or scanning every name in memory (998 req/s at full scale).
 */
const personNameMemo = new WeakMap<SnapshotReader, { snapshot: string; names: Promise<PersonNameIndex> }>();

/** The comparison names of the reader's snapshot, as person-names.sql gives them (the index's input; its tests' scan). */
export async function readPersonNames(registry: SnapshotReader): Promise<PersonNameEntry[]> {
  const rows = await registry.query(Q.personNames);
  return rows.map((r) => ({ key: String(r.person_key), pid: Number(r.pid), name: String(r.name_key ?? '') }));
}

function personNames(registry: SnapshotReader, snapshot: string): Promise<PersonNameIndex> {
  const m = personNameMemo.get(registry);
  if (m?.snapshot === snapshot) return m.names;
  const names = readPersonNames(registry).then((entries) => PersonNameIndex.build(entries));
  personNameMemo.set(registry, { snapshot, names });
  names.catch(() => {
    if (personNameMemo.get(registry)?.names === names) personNameMemo.delete(registry);
  });
  return names;
}

/**
 * find-person.sql's rows: the first 200 person keys (in key order) one of whose names contains `q`, then their
 * roles (at most 500). The keys are found in memory (personNames, an n-gram index); the roles are read from the packed
 * registry_person records (each in find-person.sql's order, so key by key they are that order), or by key with one
 * query (person-rows.sql) on a snapshot without the store.
 */
async function findPersonRows(registry: SnapshotReader, q: string): Promise<Array<Record<string, unknown>>> {
  const snapshot = registry.manifest?.snapshot_id;
  if (!snapshot) return registry.query(Q.person, { q });
  // The first 200 matching keys in key order (person-name-index.ts: the same keys as scanning every name).
  const hit = (await personNames(registry, snapshot)).match(q, 200);
  if (hit.size === 0) return [];
  const keys = [...hit.keys()];
  const store = registry.packed('registry_person');
  if (!store) return registry.query(Q.personRows, { keys: keys.join('\u001f') });
  const records = new Map<number, Array<Record<string, unknown>>>();
  const rows: Array<Record<string, unknown>> = [];
  for (const key of keys) {
    const pid = hit.get(key)!;
    let rec = records.get(pid);
    if (!rec) {
      const text = await store.get(pid);
      rec = text === null ? [] : (JSON.parse(text) as { rows: Array<Record<string, unknown>> }).rows;
      records.set(pid, rec);
    }
    for (const r of rec) if (r.person_key === key) rows.push(r);
    if (rows.length >= 500) break;
  }
  return rows.slice(0, 500);
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
  const rows = mergeSameRoles(withOrigin(await findPersonRows(registry, q)));
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
  const career = main.map((r) => ({
    company: r.company_name,
    ticker: r.ticker,
    cik: r.cik,
    role: r.role,
    role_type: r.role_type,
    // Spec 000: `period` is a string, `YYYY-MM-DD to YYYY-MM-DD` (the first and last filing dates the role was seen
    // in; one date when both are the same); the two dates are also in `period_detail`.
    period: periodText(r.first_seen, r.last_seen),
    period_detail: { from: r.first_seen, to: r.last_seen },
    accession: r.accession,
    source: r.source_kind,
    ...(r.also_reported_as ? { also_reported_as: r.also_reported_as } : {}),
    origin: r.origin,
  }));
  return {
    schema: PERSON_SCHEMA_ID,
    person: {
      name: main[0].person_name,
      cik: main[0].person_cik ?? null,
      notes: personNotes({
        roles: career.map((r) => String(r.role)),
        companies: [...new Set(main.map((r) => String(r.company_name)))],
        sources: main.map((r) => String(r.source_kind)),
      }),
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

/** Every signal type (the `type` and `also` values). */
export const SIGNAL_TYPES = [...new Set(SIGNAL_PATTERNS.map((p) => p.type))];
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

/** signal-index.sql's rows, once per served snapshot (they change only with it). */
const signalIndexMemo = new WeakMap<SnapshotReader, { snapshot: string; rows: Promise<Row[]> }>();
function signalIndexOf(registry: SnapshotReader): Promise<Row[]> {
  const snapshot = registry.manifest?.snapshot_id;
  if (!snapshot) return registry.query(Q.signalIndex);
  const m = signalIndexMemo.get(registry);
  if (m?.snapshot === snapshot) return m.rows;
  const rows = registry.query(Q.signalIndex);
  signalIndexMemo.set(registry, { snapshot, rows });
  rows.catch(() => {
    if (signalIndexMemo.get(registry)?.rows === rows) signalIndexMemo.delete(registry);
  });
  return rows;
}

/** list-signals.sql's columns, the order of a registry_signals row (jobs/registry/signals-packed.ts). */
const SIGNAL_COLUMNS = [
  'ticker',
  'exchange',
  'cik',
  'company_name',
  'signal_type',
  'strength',
  'section',
  'evidence',
  'accession',
  'filing_date',
  'pattern_id',
  'origin',
] as const;

/**
 * Every hit matching a ticker query from the packed registry_signals store (jobs/registry/signals-packed.ts): the
 * ticker's rows of list-signals.sql (its columns, order and origin leaves) filtered by type and minimum strength,
 * with no DuckDB query. Null when the store does not answer it (no store; no ticker; an exchange or `also` filter,
 * which the SQL answers).
 */
async function packedSignals(
  registry: SnapshotReader,
  p: { ticker: string | null; type: string | null; exchange: string | null; also: string | null; min_strength: number | null },
): Promise<Row[] | null> {
  const store = registry.packed('registry_signals');
  if (!store || p.ticker === null || p.exchange !== null || p.also !== null) return null;
  if (p.min_strength !== null && !Number.isInteger(p.min_strength)) return null;
  const text = await store.get(textKey(p.ticker));
  const entry = text === null ? undefined : (JSON.parse(text) as Array<[string, unknown[][]]>).find((e) => e[0] === p.ticker);
  const minStrength = p.min_strength ?? 1;
  const out: Row[] = [];
  for (const values of entry?.[1] ?? []) {
    // values[4] signal_type, values[5] strength (list-signals.sql's filters).
    if ((p.type !== null && values[4] !== p.type) || (values[5] as number) < minStrength) continue;
    const row: Record<string, unknown> = {};
    SIGNAL_COLUMNS.forEach((c, i) => {
      row[c] = values[i] ?? null;
    });
    const o = row.origin as Record<string, unknown> | null;
    row.origin = o?.leaf_hash ? o : null;
    out.push(row as Row);
  }
  return out;
}

/**
 * Signals (spec 000 rule 2): with no parameters at all, the index of signal types with counts; with any parameter
 * (also `limit` alone), the matching hits. `given` is how many query parameters the request carried (the route
 * passes it, so an unrecognised parameter also asks for results); by default, the number of fields set in `q`.
 */
export async function listSignals(registry: SnapshotReader, q: SignalQuery, given?: number) {
  const type = checkType('type', q.type);
  const also = checkType('also', q.also);
  if (also && !type)
    throw new InvalidInputError("invalid parameter 'also': needs 'type' (companies having both signals)", {
      response: { parameter: 'also' },
    });
  const filtered = (given ?? Object.values(q).filter((v) => v !== undefined).length) > 0;
  if (!filtered) {
    const idx = await signalIndexOf(registry);
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
  const packed = await packedSignals(registry, params);
  const [rows, count] = packed
    ? [packed.slice(offset, offset + limit), [{ n: packed.length }]]
    : await Promise.all([
        registry.query(Q.signals, withMembers(params, { limit, offset })).then(withOrigin),
        registry.query(Q.signalsCount, params),
      ]);
  const total = Number(count[0]?.n ?? 0);
  return {
    schema: SIGNALS_SCHEMA_ID,
    query: withMembers(params, { limit }),
    strength_scale: STRENGTH_SCALE,
    total,
    returned: rows.length,
    signals: rows,
    ...(clamped ? { limit_clamped: clamped } : {}),
    origin: rows[0]?.origin ?? null,
    next_cursor: nextCursorOf(offset, rows.length, total, snapshotId),
  };
}
