/**
 * Carrier queries over the fmcsa snapshot, transport-free: the REST routes
 * (carriers.routes.ts), the vetting records and the MCP tools all call these.
 * First argument is always the fmcsa `SnapshotReader`; a DOT may be given as a
 * number or a digit string (8-digit L&I padding accepted) and is validated
 * (InvalidInputError naming `dot`). An unknown DOT is a NotFoundError whose
 * body carries `{dot}`. A dataset with no rows answers `data_available: false`
 * with a plain "no data yet" message: absence of data is never reported as a
 * clean record.
 */
import { withMembers } from '../../lib/objects.ts';
import { decodeCursor, nextCursorOf } from '../platform/pagination.ts';
import { InvalidInputError, NotFoundError } from '../../lib/errors.ts';
import { canonicalJson, sha256Hex } from '../../lib/hash.ts';
import { createLeaf, type OriginLeaf } from '../../lib/origin.ts';
import { loadSql, type Json, type Row } from '../../lib/warehouse/duckdb.ts';
import { type PackedStore, textKey } from '../../lib/warehouse/packed-store.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { snapshotSchema } from '../../lib/warehouse/snapshot-schema.ts';
import { clampLimit } from '../platform/http.ts';
import {
  assessBasics,
  assessCarrier,
  BASICS,
  LEVEL_CUTS,
  NATIONAL_OOS_AVERAGES,
  RISK_RULES,
  type CarrierClass,
  type CarrierFeatures,
  type RiskAssessment,
} from '../../ingest/fmcsa/risk-model.ts';
import {
  RED_FLAG_BLOCK,
  RED_FLAG_CODES_KEY,
  RED_FLAG_ROW_COLUMNS,
  RED_FLAG_STORES,
  redFlagListKey,
  CARRIER_NAME_HITS,
  CARRIER_SEARCH_ROW,
  SEARCH_ROW_CENSUS_COLUMNS,
  SEARCH_ROW_RISK_COLUMNS,
  NAME_HITS_TERMS_KEY,
  nameHitsPage,
} from '../../ingest/fmcsa/search-store-keys.ts';
import { CARRIER_NAME_SETS, dotsOfOrds, nameSetsPage } from '../../ingest/fmcsa/name-sets.ts';
import { nameSetsCacheOf } from './name-sets-cache.ts';

const SQL = {
  search: loadSql('./search-carriers.sql', import.meta.url),
  searchPage: loadSql('./search-carriers-page.sql', import.meta.url),
  searchByTerm: loadSql('./search-carriers-by-term.sql', import.meta.url),
  searchByPhrase: loadSql('./search-carriers-by-phrase.sql', import.meta.url),
  carrier: loadSql('./get-carrier.sql', import.meta.url),
  carrierCensus: loadSql('./get-carrier-census.sql', import.meta.url),
  risk: /* sql */ `SELECT * FROM carrier_risk WHERE dot_number = $dot`,
  snapshotColumns: /* sql */ `SELECT name FROM carrier_snapshot_columns ORDER BY pos`,
  authority: /* sql */ `SELECT * EXCLUDE (source_file) FROM authority WHERE dot_number = $dot ORDER BY docket_number`,
  insurance: loadSql('./get-insurance.sql', import.meta.url),
  insuranceOfDockets: loadSql('./get-insurance-dockets.sql', import.meta.url),
  censusColumns: /* sql */ `SELECT column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file, content_sha256) FROM carriers)`,
  servedColumns: /* sql */ `SELECT 'crashes' AS t, column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM crashes)
    UNION ALL SELECT 'inspections', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM inspections)
    UNION ALL SELECT 'violations', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM violations)
    UNION ALL SELECT 'inspection_units', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM inspection_units)
    UNION ALL SELECT 'authority', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM authority)
    UNION ALL SELECT 'insurance', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM insurance)
    UNION ALL SELECT 'sms_basics', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM sms_basics)
    UNION ALL SELECT 'oos_orders', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM oos_orders)
    UNION ALL SELECT 'enforcement_cases', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM enforcement_cases)
    UNION ALL SELECT 'revocations', column_name FROM (DESCRIBE SELECT * EXCLUDE (source_file) FROM revocations)`,
  // Ties on the date ordered by the whole row (to_json(t)), as the packed carrier_records store has them.
  sms: /* sql */ `SELECT * EXCLUDE (source_file) FROM sms_basics t WHERE dot_number = $dot ORDER BY segment, to_json(t)::VARCHAR`,
  crashPage: loadSql('./get-crash-page.sql', import.meta.url),
  crashCounts: loadSql('./count-crashes.sql', import.meta.url),
  inspections: /* sql */ `SELECT * EXCLUDE (source_file) FROM inspections WHERE dot_number = $dot ORDER BY insp_date DESC, inspection_id LIMIT $limit OFFSET $offset`,
  inspectionCount: /* sql */ `SELECT count(*)::INTEGER AS n FROM inspections WHERE dot_number = $dot`,
  violations: loadSql('./get-violations.sql', import.meta.url),
  units: loadSql('./get-units.sql', import.meta.url),
  oos: /* sql */ `SELECT * EXCLUDE (source_file) FROM oos_orders t WHERE dot_number = $dot ORDER BY oos_date DESC, to_json(t)::VARCHAR`,
  enforcement: /* sql */ `SELECT * EXCLUDE (source_file) FROM enforcement_cases t WHERE dot_number = $dot ORDER BY case_open_date DESC, to_json(t)::VARCHAR`,
  revocations: /* sql */ `SELECT * EXCLUDE (source_file) FROM revocations t WHERE dot_number = $dot ORDER BY serve_date DESC, to_json(t)::VARCHAR`,
  status: /* sql */ `SELECT dataset, table_name, records::BIGINT AS records, as_of, data_available FROM dataset_status ORDER BY dataset`,
  sources: /* sql */ `SELECT dataset, path, source_url, byte_size, content_sha256, retrieved_at, ingested_at, run_id, row_count, reject_count FROM sources ORDER BY dataset, ingested_at`,
  redFlags: loadSql('./search-red-flags.sql', import.meta.url),
  rejects: /* sql */ `SELECT dataset, count(*)::INTEGER AS rejects FROM rejects GROUP BY dataset ORDER BY dataset`,
};

const NO_DATA = (what: string) =>
  `No ${what} data yet: the current FMCSA snapshot has no ${what} file loaded, so this is not a clean record.`;

/** Parses a DOT number (number, digit string, or 8-digit padded L&I form). */
export function parseDot(raw: unknown, parameter = 'dot'): number {
  const s = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : '';
  if (!/^\d{1,8}$/.test(s) || Number(s) === 0) {
    throw new InvalidInputError(`'${parameter}' must be a USDOT number (1 to 8 digits), got '${String(raw ?? '')}'`, {
      response: { parameter },
    });
  }
  return Number(s);
}

/** Normalises an MC/MX/FF docket (`MC-123456`, `mc123456`, `123456`) to `MC123456`. */
export function parseDocket(raw: string): string {
  const s = raw.trim().toUpperCase().replace(/[-\s]/g, '');
  const m = /^(MC|MX|FF)?0*(\d{1,8})$/.exec(s);
  if (!m) throw new InvalidInputError(`'mc' must be a docket number such as MC123456, got '${raw}'`, { response: { parameter: 'mc' } });
  return `${m[1] ?? 'MC'}${m[2]}`;
}

function notFound(dot: number): NotFoundError {
  return new NotFoundError(`no carrier with USDOT number ${dot} in the FMCSA census snapshot`, { response: { dot } });
}

export interface SearchCarriersQuery {
  name?: string;
  dot?: number | string;
  mc?: string;
  state?: string;
  /** Default 20, max 100: larger values are clamped and the result says so (`limit_clamped`). */
  limit?: number;
  /** Rows to skip (kept for existing clients; `cursor` is the paging scheme of every list route). */
  offset?: number;
  /** `next_cursor` of the previous page (service/platform/pagination.ts). */
  cursor?: string;
}

/**
 * Searches carriers by name (contains, case-insensitive), DOT, MC docket
 * and/or state. Ranked: exact name, name prefix, then contains; larger fleets
 * first within a rank. At least one filter is required.
 */
export async function searchCarriers(
  fmcsa: SnapshotReader,
  q: SearchCarriersQuery,
): Promise<{
  total: number;
  limit: number;
  limit_clamped?: { requested: number; max: number };
  offset: number;
  results: Row[];
  next_cursor: string | null;
}> {
  const dot = q.dot != null && q.dot !== '' ? parseDot(q.dot) : null;
  const mc = q.mc ? parseDocket(q.mc) : null;
  const name = q.name?.trim() ? q.name.trim().toLowerCase() : null;
  if (name && name.length < 2) throw new InvalidInputError(`'name' needs at least 2 characters`, { response: { parameter: 'name' } });
  const state = q.state?.trim() ? q.state.trim().toUpperCase() : null;
  if (state && !/^[A-Z]{2}$/.test(state))
    throw new InvalidInputError(`'state' must be a 2-letter code`, { response: { parameter: 'state' } });
  if (dot == null && !mc && !name && !state)
    throw new InvalidInputError('give at least one of name, dot, mc or state', { response: { parameter: 'name' } });
  const { limit, clamped } = clampLimit(q.limit, 20, 100);
  const snapshotId = fmcsa.manifest?.snapshot_id ?? null;
  const offset = q.cursor ? decodeCursor(q.cursor, snapshotId) : Math.max(0, Math.trunc(q.offset ?? 0));
  /** The answer of every path: `results` is the page, `pageRows` the rows the page's cursor counts. */
  const page = (total: number, results: Row[], pageRows = results.length) => ({
    total,
    limit,
    ...(clamped ? { limit_clamped: clamped } : {}),
    offset,
    results,
    next_cursor: nextCursorOf(offset, pageRows, total, snapshotId),
  });
  if (dot != null && !mc && !name && hasRowStores(fmcsa)) {
    // A DOT lookup (freight_carrier_lookup by dot_number): the one row from the packed census and snapshot stores,
    // as search-carriers-page.sql gives it, instead of a filter over the carriers parquet. A DOT the census store
    // lacks is not in the snapshot: no match.
    const row = await searchRowOf(fmcsa, dot);
    const results = (row && (state === null || row.phy_state === state) ? [row] : []).slice(offset, offset + limit);
    // An empty page reports total 0, as the SQL's window count does.
    return page(results.length, results);
  }
  if (mc && dot == null && !name) {
    // A docket lookup: the docket's DOTs from the packed carrier_by_docket store (jobs/fmcsa/docket-store.ts), in the
    // answer's order, each row from the packed stores, the state filtered on the row: no scan of three columns.
    const packed = await packedDocketSearch(fmcsa, mc, state);
    if (packed) {
      const results = packed.slice(offset, offset + limit);
      // An empty page reports total 0, as the SQL's window count does.
      return page(results.length ? packed.length : 0, results);
    }
  }
  if (name && dot == null && !mc && hasRowStores(fmcsa)) {
    // A frequent word's answer precomputed at publish (jobs/fmcsa/carrier-name-index.ts), else any other word, part
    // of a word or phrase the sets store answers (bitmaps of words and pairs; a longer phrase's few candidates
    // checked against their names): no DuckDB query. Each row from the packed census and snapshot stores.
    const q = { name, state, limit, offset };
    const found = (await nameHitsDots(fmcsa, q)) ?? (await nameSetsDots(fmcsa, q));
    const packed = found && (await pageRowsOf(fmcsa, found.dots, found.total));
    if (packed) return page(packed.total, packed.rows);
  }
  const indexed = name && dot == null && !mc ? await nameIndexQuery(fmcsa, name) : null;
  if (indexed) {
    // The name index built at publish (jobs/fmcsa/carrier-name-index.ts) gives the page's DOTs, ranks and total
    // without a scan of every name; each row's columns come from the packed census and snapshot stores.
    const hits = await fmcsa.query(indexed, { name, state, limit, offset });
    const total = hits.length ? Number(hits[0].total) : 0;
    const rows = await searchRowsOf(
      fmcsa,
      hits.map((h) => Number(h.dot_number)),
    );
    // A row missing from the packed store (the reader swapped snapshots between the two reads) sends the request
    // to the scan below, which reads one snapshot.
    if (rows.every((r): r is Row => r !== null)) return page(total, rows, hits.length);
  }
  const params = { dot, mc, name, state, limit, offset };
  // With the packed carrier_snapshot store, the risk columns of the page's rows come from it: the SQL then reads
  // carriers alone instead of joining every match to the carrier_risk parquet (issue 22).
  const packed = fmcsa.packed('carrier_snapshot') !== null;
  const rows = await fmcsa.query(packed ? SQL.searchPage : SQL.search, params);
  const total = rows.length ? Number(rows[0].total) : 0;
  const results = rows.map(({ total: _t, rank: _r, ...r }) => r);
  return page(total, packed ? await Promise.all(results.map((r) => withRiskColumns(fmcsa, r))) : results, rows.length);
}

/** A word of the name index: a run of [a-z0-9] with a letter (jobs/fmcsa/derive-carrier-name-terms.sql). */
const INDEX_WORD = /^[a-z0-9]*[a-z][a-z0-9]*$/;
/** A phrase the index answers: a first run of [a-z0-9] with a letter, then a separator and anything else. */
const INDEX_PHRASE = /^[a-z0-9]*[a-z][a-z0-9]*[^a-z0-9]/;

/**
 * The SQL by which the name index answers a name query exactly, or null (the scan answers): a snapshot with the
 * index and both packed stores, and either one word of the index (search-carriers-by-term.sql) or a phrase that
 * starts with one (search-carriers-by-phrase.sql, read from a snapshot whose index has the terms' tails, published
 * since issue 22's phrase search). Any other name (no letter, or a first run of digits alone, or a leading
 * separator) is scanned.
 */
async function nameIndexQuery(fmcsa: SnapshotReader, name: string): Promise<string | null> {
  const tables = fmcsa.manifest?.tables;
  if (!tables?.carrier_name_terms || !tables.carrier_name_dict) return null;
  if (!hasRowStores(fmcsa)) return null;
  if (INDEX_WORD.test(name)) return SQL.searchByTerm;
  if (!INDEX_PHRASE.test(name)) return null;
  const schema = await snapshotSchema(fmcsa);
  return schema.get('carrier_name_terms')?.has('tail') ? SQL.searchByPhrase : null;
}

/**
 * Every search row of a docket (and state) from the packed carrier_by_docket store, in search-carriers-page.sql's
 * order; null when the snapshot has no such store (or a row is missing: the reader swapped snapshots), so the SQL
 * answers.
 */
async function packedDocketSearch(fmcsa: SnapshotReader, mc: string, state: string | null): Promise<Row[] | null> {
  const store = fmcsa.packed('carrier_by_docket');
  if (!store || !hasRowStores(fmcsa)) return null;
  const text = await store.get(textKey(mc));
  const dots = text === null ? [] : ((JSON.parse(text) as Array<[string, number[]]>).find((e) => e[0] === mc)?.[1] ?? []);
  const rows = await searchRowsOf(fmcsa, dots);
  if (!rows.every((r): r is Row => r !== null)) return null;
  return state === null ? rows : rows.filter((r) => r.phy_state === state);
}

/** The indexed terms of a carrier_name_hits store, in order (read once per store). */
const nameHitsTerms = new WeakMap<PackedStore, Promise<string[]>>();

/** A name search's query as the packed stores take it (name lower-case and trimmed, state upper-case or null). */
interface NameQuery {
  name: string;
  state: string | null;
  limit: number;
  offset: number;
}

/**
 * A name search's page of DOTs and total from the packed carrier_name_hits store (jobs/fmcsa/carrier-name-index.ts):
 * the query's counts header and the one or two blocks of DOTs of the page: the answer of
 * search-carriers-by-term.sql with no DuckDB query. Null when the store does not answer it (no store, a query that
 * is not an indexed term, a page past NAME_HITS_CAP).
 */
async function nameHitsDots(fmcsa: SnapshotReader, q: NameQuery): Promise<{ dots: number[]; total: number } | null> {
  const store = fmcsa.packed(CARRIER_NAME_HITS);
  if (!store) return null;
  let termsP = nameHitsTerms.get(store);
  if (!termsP) {
    termsP = store.get(NAME_HITS_TERMS_KEY).then((t) => (t === null ? [] : (JSON.parse(t) as string[])));
    nameHitsTerms.set(store, termsP);
  }
  return nameHitsPage((k) => store.get(k), await termsP, q.name, q.state, q.limit, q.offset);
}

/** Whether the snapshot has the packed stores a search row is read from (census and snapshot). */
function hasRowStores(fmcsa: SnapshotReader): boolean {
  return fmcsa.packed('carrier_census') !== null && fmcsa.packed('carrier_snapshot') !== null;
}

/** A page's rows from the packed stores, with its total; null when a row is missing (the reader swapped snapshots). */
async function pageRowsOf(fmcsa: SnapshotReader, dots: readonly number[], total: number): Promise<{ rows: Row[]; total: number } | null> {
  const rows = await searchRowsOf(fmcsa, dots);
  return rows.every((r): r is Row => r !== null) ? { rows, total } : null;
}

/**
 * A name search's page of DOTs and total from the packed carrier_name_sets store (ingest/fmcsa/name-sets.ts): for a
 * word of [a-z0-9] with a letter or a phrase of two (PAIR_PHRASE), the answer of search-carriers-by-term.sql or
 * -by-phrase.sql; for a longer phrase, its candidates checked against their names (from the packed census store) as
 * search-carriers-page.sql checks them. No DuckDB query. Null when the store does not answer the name (no store,
 * too many candidates, a name that is not printable ASCII, ...): the SQL then answers.
 */
async function nameSetsDots(fmcsa: SnapshotReader, q: NameQuery): Promise<{ dots: number[]; total: number } | null> {
  const { census: at } = searchPositionsOf(await snapshotMeta(fmcsa));
  const store = fmcsa.packed(CARRIER_NAME_SETS);
  const sets = store && nameSetsCacheOf(store);
  if (!sets) return null;
  // A longer phrase's candidates are checked against their names, read from the packed search-row store, else the
  // census store (of the same snapshot as the sets: nothing below awaits before the search).
  const rowStore = fmcsa.packed(CARRIER_SEARCH_ROW);
  const names = rowStore ?? fmcsa.packed('carrier_census');
  const [legalAt, dbaAt] = rowStore ? [LEGAL_NAME_AT, DBA_NAME_AT] : [at[LEGAL_NAME_AT]!, at[DBA_NAME_AT]!];
  const namesOf = (dot: number) => {
    const text = names?.read(dot);
    if (text == null) return null;
    const values = JSON.parse(text) as Json[];
    return [values[legalAt] ?? null, values[dbaAt] ?? null] as [string | null, string | null];
  };
  const found = nameSetsPage(sets, sets.finder, sets.scratch, q.name, q.state, q.limit, q.offset, namesOf);
  const dots = found && dotsOfOrds(sets, found.ords);
  return found && dots ? { dots, total: found.total } : null;
}

/** A search row's keys in order: its census columns, then risk_score, risk_level, recommendation (carrier_search_row's values). */
const SEARCH_ROW_KEYS = [...SEARCH_ROW_CENSUS_COLUMNS.map(([key]) => key), ...SEARCH_ROW_RISK_COLUMNS];

/** Positions of the legal and DBA names among SEARCH_ROW_CENSUS_COLUMNS (and carrier_search_row's values). */
const LEGAL_NAME_AT = SEARCH_ROW_CENSUS_COLUMNS.findIndex((c) => c[0] === 'legal_name');
const DBA_NAME_AT = SEARCH_ROW_CENSUS_COLUMNS.findIndex((c) => c[0] === 'dba_name');

/** Where a search row's values sit in the packed rows of a snapshot: its census columns, then risk_score, risk_level, recommendation. */
interface SearchPositions {
  census: number[];
  risk: [number, number, number];
}
const searchPositions = new WeakMap<SnapshotMeta, SearchPositions>();
const riskColumnIndexes = new WeakMap<SnapshotMeta, Map<string, number>>();

/**
 * Each carrier_risk column's position in the packed carrier_snapshot row of `meta`'s snapshot (`meta.columns`, the
 * first place of a name, as indexOf), found once per snapshot and shared by every reader of that row.
 */
function riskColumnIndexOf(meta: SnapshotMeta): Map<string, number> {
  let at = riskColumnIndexes.get(meta);
  if (!at) {
    at = new Map();
    for (let i = 0; i < meta.columns.length; i++) if (!at.has(meta.columns[i]!)) at.set(meta.columns[i]!, i);
    riskColumnIndexes.set(meta, at);
  }
  return at;
}

/** The positions of the search row's columns in `meta`'s column lists (-1: absent), found once per snapshot, not per row. */
function searchPositionsOf(meta: SnapshotMeta): SearchPositions {
  let p = searchPositions.get(meta);
  if (!p) {
    const risk = riskColumnIndexOf(meta);
    const of = (c: string) => risk.get(c) ?? -1;
    p = {
      census: SEARCH_ROW_CENSUS_COLUMNS.map(([, col]) => meta.censusColumns.indexOf(col)),
      risk: [of('risk_score'), of('risk_level'), of('recommendation')],
    };
    searchPositions.set(meta, p);
  }
  return p;
}

/**
 * A search row of a DOT from the packed census store, with its risk columns, as search-carriers-page.sql +
 * withRiskColumns give it; null when the store (of the snapshot now served) has no such DOT.
 */
async function searchRowOf(fmcsa: SnapshotReader, dot: number): Promise<Row | null> {
  return (await searchRowsOf(fmcsa, [dot]))[0] ?? null;
}

/**
 * searchRowOf of each DOT, read in one synchronous pass over the packed census and snapshot stores of the snapshot
 * now served (issue 22: a name search page reads 40 records; one promise chain per row was a fifth of its garbage).
 * Each row is one object, its census columns then risk_score, risk_level and recommendation, as
 * `withRiskColumns(row)` gives them.
 */
async function searchRowsOf(fmcsa: SnapshotReader, dots: readonly number[]): Promise<Array<Row | null>> {
  // One short record per row when the snapshot now served has the search-row store (read at once: no metadata
  // needed), else the census and snapshot records at the snapshot's column positions.
  const rowStore = fmcsa.packed(CARRIER_SEARCH_ROW);
  if (rowStore) return dots.map((dot) => searchRowFrom(rowStore.read(dot)));
  const { census: at, risk } = searchPositionsOf(await snapshotMeta(fmcsa));
  const census = fmcsa.packed('carrier_census');
  const rows: Array<Row | null> = [];
  for (const dot of dots) {
    const text = census ? census.read(dot) : null;
    if (text == null) {
      rows.push(null);
      continue;
    }
    const values = JSON.parse(text) as Json[];
    const row: Row = {};
    for (let i = 0; i < SEARCH_ROW_CENSUS_COLUMNS.length; i++) row[SEARCH_ROW_CENSUS_COLUMNS[i]![0]] = values[at[i]!] ?? null;
    const r = packedRiskValues(fmcsa, Number(row.dot_number));
    row.risk_score = r ? (r[risk[0]] ?? null) : null;
    row.risk_level = r ? (r[risk[1]] ?? null) : null;
    row.recommendation = r ? (r[risk[2]] ?? null) : null;
    rows.push(row);
  }
  return rows;
}

/** A search row from its carrier_search_row record (SEARCH_ROW_KEYS' values), or null for a DOT the store lacks. */
function searchRowFrom(text: string | null): Row | null {
  if (text == null) return null;
  const values = JSON.parse(text) as Json[];
  const row: Row = {};
  for (let i = 0; i < SEARCH_ROW_KEYS.length; i++) row[SEARCH_ROW_KEYS[i]!] = values[i] ?? null;
  return row;
}

/** A search row with risk_score, risk_level and recommendation of its packed carrier_risk row appended (null when none), as search-carriers.sql's LEFT JOIN gives them. */
async function withRiskColumns(fmcsa: SnapshotReader, row: Row): Promise<Row> {
  // The three values by their positions in the packed row (no object of all ~90 columns per search row).
  const { risk } = searchPositionsOf(await snapshotMeta(fmcsa));
  const values = packedRiskValues(fmcsa, Number(row.dot_number));
  const at = (i: number) => (values ? (values[i] ?? null) : null);
  return withMembers(row, { risk_score: at(risk[0]), risk_level: at(risk[1]), recommendation: at(risk[2]) });
}

/** Carrier identity (census row + L&I authority dockets and insurance filings, money in thousands), or NotFoundError. */
export async function getCarrier(fmcsa: SnapshotReader, dotRaw: number | string): Promise<Row & { authority: Row[]; insurance: Row[] }> {
  const dot = parseDot(dotRaw);
  let row: Row | undefined;
  const census = fmcsa.packed('carrier_census');
  if (census && fmcsa.packed('carrier_snapshot')) {
    // Both rows from packed stores (written at publish, jobs/fmcsa/fmcsa.pipeline.ts): no parquet read at all.
    const [text, r] = await Promise.all([census.get(dot), packedCarrierRiskColumns(fmcsa, dot)]);
    if (text == null) throw notFound(dot);
    const { censusColumns } = await snapshotMeta(fmcsa);
    const values = JSON.parse(text) as Json[];
    // One object, filled in place: the census row, its risk columns, then the filings (the members and order of the
    // spreads `{ ...withCarrierRiskColumns(census, risk), ...filings }`, without two copies of a ~50-member object).
    const out: Row = {};
    for (let i = 0; i < censusColumns.length; i++) out[censusColumns[i]!] = values[i];
    row = assignCarrierRiskColumns(out, r);
    // The filings from the packed carrier_filings store (jobs/fmcsa/serving-stores.ts): no DuckDB query at all.
    const filings = await packedFilings(fmcsa, dot);
    if (filings) {
      row.authority = filings.authority;
      row.insurance = filings.insurance;
      return row as Row & { authority: Row[]; insurance: Row[] };
    }
    // The dockets of the census row stand in for get-insurance.sql's read of carriers.
    const [authority, insurance] = await Promise.all([
      fmcsa.query(SQL.authority, { dot }),
      fmcsa.query(SQL.insuranceOfDockets, {
        dot,
        docket1: docketOf(row.docket1),
        docket2: docketOf(row.docket2),
        docket3: docketOf(row.docket3),
      }),
    ]);
    return withMembers(row, { authority, insurance });
  }
  if (fmcsa.packed('carrier_snapshot')) {
    // The census row from parquet, the risk columns from the packed carrier_risk row: same fields,
    // same order and values as get-carrier.sql's join, without a second parquet lookup.
    const [c] = await fmcsa.query(SQL.carrierCensus, { dot });
    if (c) {
      const r = await packedRiskRow(fmcsa, dot);
      row = withCarrierRiskColumns(c, r);
    }
  } else [row] = await fmcsa.query(SQL.carrier, { dot });
  if (!row) throw notFound(dot);
  const [authority, insurance] = await Promise.all([fmcsa.query(SQL.authority, { dot }), fmcsa.query(SQL.insurance, { dot })]);
  return withMembers(row, { authority, insurance });
}

/** A census docket column's value as a query parameter (VARCHAR or null). */
const docketOf = (v: Json | undefined): string | null => (typeof v === 'string' ? v : null);

/** Rebuilds the CarrierFeatures of a `carrier_risk` row (the columns are the feature names). */
export function featuresFromRow(r: Row): CarrierFeatures {
  return featuresOf((k) => r[k]);
}

/** featuresFromRow over a row given by its column values (`get(column)`: undefined for a column the row lacks). */
function featuresOf(get: (column: string) => Json | undefined): CarrierFeatures {
  const num = (k: string) => (get(k) == null ? null : Number(get(k)));
  const n0 = (k: string) => Number(get(k) ?? 0);
  const bool = (k: string) => (get(k) == null ? null : Boolean(get(k)));
  const basics: CarrierFeatures['basics'] = {};
  for (const b of BASICS)
    basics[b.key] = {
      measure: num(`${b.key}_measure`),
      percentile: num(`${b.key}_pct`),
      alert: bool(`${b.key}_alert`),
      acute_critical: bool(`${b.key}_ac`),
    };
  return {
    dot_number: Number(get('dot_number')),
    legal_name: (get('legal_name') as string | null) ?? null,
    phy_state: (get('phy_state') as string | null) ?? null,
    status_code: (get('status_code') as string | null) ?? null,
    carrier_class: get('carrier_class') as CarrierClass,
    authority_status: (get('authority_status') as CarrierFeatures['authority_status']) ?? null,
    authority_age_days: num('authority_age_days'),
    revocations_total: n0('revocations_total'),
    revocations_recent: n0('revocations_recent'),
    oos_orders_active: n0('oos_orders_active'),
    oos_orders_total: n0('oos_orders_total'),
    safety_rating: (get('safety_rating') as string | null) ?? null,
    mcs150_age_days: num('mcs150_age_days'),
    power_units: num('power_units'),
    drivers: num('drivers'),
    inspections_24m: n0('inspections_24m'),
    driver_inspections_24m: n0('driver_inspections_24m'),
    driver_oos_24m: n0('driver_oos_24m'),
    vehicle_inspections_24m: n0('vehicle_inspections_24m'),
    vehicle_oos_24m: n0('vehicle_oos_24m'),
    hazmat_inspections_24m: n0('hazmat_inspections_24m'),
    hazmat_oos_24m: n0('hazmat_oos_24m'),
    driver_oos_rate: num('driver_oos_rate'),
    vehicle_oos_rate: num('vehicle_oos_rate'),
    hazmat_oos_rate: num('hazmat_oos_rate'),
    crashes_24m: n0('crashes_24m'),
    fatal_crashes_24m: n0('fatal_crashes_24m'),
    injury_crashes_24m: n0('injury_crashes_24m'),
    towaway_crashes_24m: n0('towaway_crashes_24m'),
    crashes_per_power_unit: num('crashes_per_power_unit'),
    basics,
    basics_over_threshold: n0('basics_over_threshold'),
    basics_acute_critical: n0('basics_acute_critical'),
    bipd_on_file_k: num('bipd_on_file_k'),
    bipd_required_k: num('bipd_required_k'),
    prior_revoke_flag: bool('prior_revoke_flag'),
    shared_phone_carriers: n0('shared_phone_carriers'),
    shared_email_carriers: n0('shared_email_carriers'),
    shared_address_carriers: n0('shared_address_carriers'),
    shared_vin_carriers: n0('shared_vin_carriers'),
    shared_with_revoked_carriers: n0('shared_with_revoked_carriers'),
  };
}

/**
 * The carrier_risk row of a DOT. From the packed store when the snapshot has
 * one (carrier_risk is a parquet-only table: a point read of ~90 columns from
 * parquet decodes whole row groups); else from SQL (older snapshots).
 */
async function riskRow(fmcsa: SnapshotReader, dot: number): Promise<Row> {
  if (fmcsa.packed('carrier_snapshot')) {
    const row = await packedRiskRow(fmcsa, dot);
    if (!row) throw notFound(dot);
    return row;
  }
  const [row] = await fmcsa.query(SQL.risk, { dot });
  if (!row) throw notFound(dot);
  return row;
}

/**
 * The carrier_risk row of a DOT as a getter of its column values: over the packed row's JSON array when the snapshot
 * has the store (columns found by a map built once per snapshot), not an object of its ~70 columns built per
 * request (issue 22: /api/safety); riskRow's row otherwise. NotFoundError when the DOT has no row, as riskRow.
 */
async function riskValues(fmcsa: SnapshotReader, dot: number): Promise<(column: string) => Json | undefined> {
  if (fmcsa.packed('carrier_snapshot')) {
    const meta = await snapshotMeta(fmcsa);
    const values = packedRiskValues(fmcsa, dot);
    if (values === null) throw notFound(dot);
    const index = riskColumnIndexOf(meta);
    return (c) => {
      const i = index.get(c);
      return i === undefined ? undefined : values[i];
    };
  }
  const row = await riskRow(fmcsa, dot);
  return (c) => row[c];
}

/** A census row with get-carrier.sql's risk columns appended, in its order (null when the carrier has no risk row). */
function withCarrierRiskColumns(census: Row, risk: Row | null | undefined): Row {
  return assignCarrierRiskColumns(withMembers(census), risk);
}

/** withCarrierRiskColumns on `row` itself (a member it already has keeps its place and takes the new value, as in the spread). */
function assignCarrierRiskColumns(row: Row, risk: Row | null | undefined): Row {
  row.risk_score = risk?.risk_score ?? null;
  row.risk_level = risk?.risk_level ?? null;
  row.recommendation = risk?.recommendation ?? null;
  row.authority_status = risk?.authority_status ?? null;
  row.as_of = risk?.as_of ?? null;
  return row;
}

/** The columns withCarrierRiskColumns takes from a carrier_risk row. */
const CARRIER_RISK_COLUMNS = ['risk_score', 'risk_level', 'recommendation', 'authority_status', 'as_of'] as const;

/**
 * withCarrierRiskColumns' five columns of the packed carrier_risk row, taken by position from its JSON array (a
 * column the snapshot lacks is undefined, as in packedRiskRow's row); null when the DOT has no row. Not the whole
 * row as an object of ~70 members for five of them (issue 22: /api/carrier/{dot}).
 */
async function packedCarrierRiskColumns(fmcsa: SnapshotReader, dot: number): Promise<Row | null> {
  const at = riskColumnIndexOf(await snapshotMeta(fmcsa));
  const values = packedRiskValues(fmcsa, dot);
  if (values === null) return null;
  const row: Row = {};
  for (const c of CARRIER_RISK_COLUMNS) {
    const i = at.get(c);
    if (i !== undefined) row[c] = values[i];
  }
  return row;
}

/**
 * `dot`'s packed carrier_risk row as its JSON array (carrier_snapshot_columns order), read synchronously from the
 * carrier_snapshot store of the snapshot now served; null when the store or the row is absent.
 */
function packedRiskValues(fmcsa: SnapshotReader, dot: number): Json[] | null {
  const text = fmcsa.packed('carrier_snapshot')?.read(dot);
  return text == null ? null : (JSON.parse(text) as Json[]);
}

/** The packed carrier_risk row (JSON array in carrier_snapshot_columns order) as a Row, or null. */
async function packedRiskRow(fmcsa: SnapshotReader, dot: number): Promise<Row | null> {
  const { columns } = await snapshotMeta(fmcsa);
  const values = packedRiskValues(fmcsa, dot);
  if (values === null) return null;
  const row: Row = {};
  columns.forEach((c, i) => {
    row[c] = values[i];
  });
  return row;
}

interface SnapshotMeta {
  status: Row[];
  sources: Row[];
  /** Column names of carrier_snapshot.v, in order. */
  columns: string[];
  /** Column names of carrier_census.v (the carriers row without source_file, content_sha256), in order. */
  censusColumns: string[];
  /** The inputs every carrier's RiskSnapshot rests on (`snapshotInputsOf`), and their canonical JSON. */
  inputs: readonly RiskSnapshotInput[];
  inputsJson: string;
}
/** A SnapshotMeta with its inputs built and canonicalized (once per snapshot: the meta is cached per manifest). */
function metaOf(status: Row[], sources: Row[], columns: string[], censusColumns: string[]): SnapshotMeta {
  const inputs = snapshotInputsOf(status, sources);
  return { status, sources, columns, censusColumns, inputs, inputsJson: canonicalJson(inputs) };
}
const datasetStatusCache = new WeakMap<object, Promise<SnapshotMeta>>();
/** Dataset status, sources and the snapshot column order of the snapshot being served (cached per manifest). */
async function snapshotMeta(fmcsa: SnapshotReader): Promise<SnapshotMeta> {
  const m = fmcsa.manifest;
  if (!m) return metaOf(await fmcsa.query(SQL.status), [], [], []);
  let p = datasetStatusCache.get(m);
  if (!p) {
    p = Promise.all([
      fmcsa.query(SQL.status),
      fmcsa.query(SQL.sources),
      fmcsa.query(SQL.snapshotColumns),
      fmcsa.query(SQL.censusColumns),
    ]).then(([status, sources, cols, census]) =>
      metaOf(
        status,
        sources,
        cols.map((c) => String(c.name)),
        census.map((c) => String(c.column_name)),
      ),
    );
    p.catch(() => datasetStatusCache.delete(m));
    datasetStatusCache.set(m, p);
  }
  return p;
}

function hasData(status: Row[], dataset: string): boolean {
  return Boolean(status.find((s) => s.dataset === dataset)?.data_available);
}

/** The seven BASICs with measures, percentiles where public, thresholds and flags. */
export async function getCarrierSafety(fmcsa: SnapshotReader, dotRaw: number | string) {
  const dot = parseDot(dotRaw);
  const risk = await riskValues(fmcsa, dot);
  const f = featuresOf(risk);
  const { status } = await snapshotMeta(fmcsa);
  const sms = (await packedRecords(fmcsa, dot))?.sms ?? (await fmcsa.query(SQL.sms, { dot }));
  const basics = assessBasics(f).map((b, i) =>
    withMembers(b, {
      acute_critical: f.basics[BASICS[i].key]?.acute_critical ?? null,
      public: BASICS[i].key !== 'hm_compliance' && BASICS[i].key !== 'crash_ind',
    }),
  );
  return {
    dot_number: dot,
    legal_name: f.legal_name,
    carrier_class: f.carrier_class,
    safety_rating: f.safety_rating,
    // True only when this carrier has an SMS row: a loaded SMS file without this carrier in it is no SMS data for it.
    sms_data_available: hasData(status, 'sms') && sms.length > 0,
    sms_dataset_loaded: hasData(status, 'sms'),
    sms_segment: (sms[0]?.segment as string | undefined) ?? null,
    percentiles_public: f.carrier_class === 'passenger',
    note:
      f.carrier_class === 'passenger'
        ? 'Passenger carriers: FMCSA still publishes percentiles and alerts.'
        : 'Property carriers: FMCSA publishes measures but no percentiles or alerts since the FAST Act (Dec 2015); Crash Indicator and HM Compliance are in no public file.',
    basics,
    basics_over_threshold: f.basics_over_threshold,
    sms_counts: sms[0]
      ? {
          insp_total: sms[0].insp_total,
          driver_insp_total: sms[0].driver_insp_total,
          driver_oos_insp_total: sms[0].driver_oos_insp_total,
          vehicle_insp_total: sms[0].vehicle_insp_total,
          vehicle_oos_insp_total: sms[0].vehicle_oos_insp_total,
        }
      : null,
    as_of: risk('as_of'),
  };
}

/** Crashes by carrier (`dot`) or by vehicle (`vin`); one row per vehicle per crash. */
/**
 * Crashes of a carrier (by `dot`) or of one vehicle (by `vin`). `limit` keeps the newest `limit` crashes
 * (and their vehicle rows); the counts always cover every crash on file.
 */
/**
 * Crashes of a carrier (`dot`) or a vehicle (`vin`), newest first, one row per vehicle involved. Pages like every list
 * route (platform/pagination.ts): `limit` crashes (default and max 500) from `cursor`; the counts cover every crash.
 */
export async function getCrashes(fmcsa: SnapshotReader, q: { dot?: number | string; vin?: string; limit?: number; cursor?: string }) {
  const hasDot = q.dot != null && q.dot !== '';
  if (!hasDot && !q.vin) throw new InvalidInputError(`give 'dot' or 'vin'`, { response: { parameter: 'dot' } });
  const { status } = await snapshotMeta(fmcsa);
  const available = hasData(status, 'crash');
  let dot: number | null = null;
  let vin: string | null = null;
  if (hasDot) {
    dot = parseDot(q.dot);
    await riskRow(fmcsa, dot);
  } else {
    vin = String(q.vin).trim().toUpperCase();
    if (!/^[A-HJ-NPR-Z0-9]{11,17}$/.test(vin))
      throw new InvalidInputError(`'vin' must be 11 to 17 characters (no I, O or Q)`, { response: { parameter: 'vin' } });
  }
  const { limit, clamped } = clampLimit(q.limit, 500, 500);
  const snapshotId = fmcsa.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(q.cursor, snapshotId);
  const packed = await packedCrashes(fmcsa, dot, vin, limit, offset);
  const [rows, [counts]] = packed
    ? [packed.rows, [packed.counts]]
    : await Promise.all([fmcsa.query(SQL.crashPage, { dot, vin, limit, offset }), fmcsa.query(SQL.crashCounts, { dot, vin })]);
  const returned = new Set(rows.map((r) => String(r.crash_id))).size;
  const total = Number(counts?.total_crashes ?? 0);
  return {
    dot_number: dot,
    vin,
    data_available: available,
    message: available ? null : NO_DATA('crash'),
    total_crashes: total,
    fatal: Number(counts?.fatal ?? 0),
    injury: Number(counts?.injury ?? 0),
    tow_away: Number(counts?.tow_away ?? 0),
    limit,
    ...(clamped ? { limit_clamped: clamped } : {}),
    returned_crashes: returned,
    vehicles: rows,
    next_cursor: nextCursorOf(offset, returned, total, snapshotId),
  };
}

/** Inspections (newest 100), their violations and units, and 24-month OOS rates against the national averages. */
export async function getInspections(fmcsa: SnapshotReader, dotRaw: number | string, opts: { limit?: number; cursor?: string } = {}) {
  const dot = parseDot(dotRaw);
  // A page of `limit` inspections (default and max 100), newest first, from `cursor` (platform/pagination.ts);
  // violations and units are those of the inspections served.
  const { limit, clamped } = clampLimit(opts.limit, 100, 100);
  const snapshotId = fmcsa.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(opts.cursor, snapshotId);
  const f = featuresOf(await riskValues(fmcsa, dot));
  const { status } = await snapshotMeta(fmcsa);
  const available = hasData(status, 'inspection');
  const [inspections, [{ n }], violations, units] =
    (await packedInspections(fmcsa, dot, limit, offset)) ??
    (await Promise.all([
      fmcsa.query(SQL.inspections, { dot, limit, offset }),
      fmcsa.query(SQL.inspectionCount, { dot }),
      fmcsa.query(SQL.violations, { dot, limit, offset }),
      fmcsa.query(SQL.units, { dot, limit, offset }),
    ]));
  const rate = (insp: number, oos: number, r: number | null, nat: number) => ({
    inspections: insp,
    oos_inspections: oos,
    oos_rate: r,
    national_average: nat,
    above_national: r == null ? null : r > nat,
  });
  return {
    dot_number: dot,
    data_available: available || hasData(status, 'sms'),
    source: available ? 'inspection file' : hasData(status, 'sms') ? 'SMS 24-month counters' : null,
    message: available || hasData(status, 'sms') ? null : NO_DATA('inspection'),
    window: '24 months',
    total_inspections_on_file: Number(n),
    ...(clamped ? { limit_clamped: clamped } : {}),
    inspections_24m: f.inspections_24m,
    rates: {
      driver: rate(f.driver_inspections_24m, f.driver_oos_24m, f.driver_oos_rate, NATIONAL_OOS_AVERAGES.driver),
      vehicle: rate(f.vehicle_inspections_24m, f.vehicle_oos_24m, f.vehicle_oos_rate, NATIONAL_OOS_AVERAGES.vehicle),
      hazmat: rate(f.hazmat_inspections_24m, f.hazmat_oos_24m, f.hazmat_oos_rate, NATIONAL_OOS_AVERAGES.hazmat),
    },
    national_average_note:
      'National averages are the ones FMCSA QCMobile reports (frozen at 2009-10). Rates need at least 3 inspections of that kind.',
    inspections,
    violations,
    units,
    next_cursor: nextCursorOf(offset, inspections.length, Number(n), snapshotId),
  };
}

/** Column names (table order, without source_file) of the rows in the packed crash and inspection stores. */
type ServedColumns = Record<(typeof SERVED_TABLES)[number], string[]>;
const SERVED_TABLES = [
  'crashes',
  'inspections',
  'violations',
  'inspection_units',
  'authority',
  'insurance',
  'sms_basics',
  'oos_orders',
  'enforcement_cases',
  'revocations',
] as const;
const servedColumnsCache = new WeakMap<object, Promise<ServedColumns>>();
async function servedColumns(fmcsa: SnapshotReader): Promise<ServedColumns> {
  const m = fmcsa.manifest!;
  let p = servedColumnsCache.get(m);
  if (!p) {
    p = fmcsa.query(SQL.servedColumns).then((rows) => {
      const out = Object.fromEntries(SERVED_TABLES.map((t) => [t, [] as string[]])) as ServedColumns;
      for (const r of rows) out[r.t as keyof ServedColumns].push(String(r.column_name));
      return out;
    });
    p.catch(() => servedColumnsCache.delete(m));
    servedColumnsCache.set(m, p);
  }
  return p;
}

/** A row object from a packed JSON array of values in `columns` order (the keys and order the SQL row reader gives). */
function rowOf(columns: string[], values: Json[]): Row {
  const row: Row = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]] = values[i];
  return row;
}

/**
 * The header and the entries [offset, offset + limit) of a packed record `<header>␁<entry>␁…` (␁: a raw U+0001,
 * jobs/fmcsa/serving-stores.ts), each parsed: entries before the page are skipped unparsed.
 */
function packedPage(text: string, offset: number, limit: number): { header: Json; page: Json[] } {
  let end = text.indexOf('\u0001');
  const header = JSON.parse(end < 0 ? text : text.slice(0, end)) as Json;
  const page: Json[] = [];
  for (let i = 0; end >= 0 && page.length < limit; i++) {
    const start = end + 1;
    end = text.indexOf('\u0001', start);
    if (i >= offset) page.push(JSON.parse(end < 0 ? text.slice(start) : text.slice(start, end)) as Json);
  }
  return { header, page };
}

/**
 * The counts and the crashes [offset, offset + limit) of a crash_by_dot record `<counts>␁<vehicle row>␁…`: rows of one
 * crash are adjacent and start with its crash_id (`["<id>",`), so crashes before the page are counted by that prefix
 * and skipped unparsed.
 */
function packedCrashPage(text: string, offset: number, limit: number): { header: Json; page: Json[][][] } {
  let end = text.indexOf('\u0001');
  const header = JSON.parse(end < 0 ? text : text.slice(0, end)) as Json;
  const page: Json[][][] = [];
  let crash = -1;
  let id = '';
  while (end >= 0) {
    const start = end + 1;
    end = text.indexOf('\u0001', start);
    const entry = end < 0 ? text.slice(start) : text.slice(start, end);
    const entryId = entry.slice(0, entry.indexOf(','));
    if (entryId !== id) {
      id = entryId;
      crash++;
      if (crash >= offset + limit) break;
      if (crash >= offset) page.push([]);
    }
    if (crash >= offset) page[page.length - 1]!.push(JSON.parse(entry) as Json[]);
  }
  return { header, page };
}

type CrashCounts = [total: number, fatal: number, injury: number, tow_away: number];

/**
 * A page of crashes and the counts from the packed crash_by_dot / crash_by_vin store (jobs/fmcsa/serving-stores.ts):
 * the rows and counts of get-crash-page.sql and count-crashes.sql without a parquet scan. Null when the snapshot
 * has no such store (the SQL answers).
 */
async function packedCrashes(fmcsa: SnapshotReader, dot: number | null, vin: string | null, limit: number, offset: number) {
  const store = fmcsa.packed(dot != null ? 'crash_by_dot' : 'crash_by_vin');
  if (!store) return null;
  const cols = await servedColumns(fmcsa);
  // The per-DOT record groups its rows by their first value: crash_id in the table's DDL (jobs/fmcsa/tables.sql).
  if (cols.crashes[0] !== 'crash_id') return null;
  const text = await store.get(dot ?? textKey(vin!));
  let counts: CrashCounts = [0, 0, 0, 0];
  let page: Json[][][] = [];
  if (text != null && dot != null) {
    const p = packedCrashPage(text, offset, limit);
    counts = p.header as CrashCounts;
    page = p.page;
  } else if (text != null) {
    // Several VINs may share a key: the record lists [vin, counts, crashes] of each (a vehicle has few crashes).
    const hit = (JSON.parse(text) as Array<[string, CrashCounts, Json[][][]]>).find((e) => e[0] === vin);
    if (hit) {
      counts = hit[1];
      page = hit[2].slice(offset, offset + limit);
    }
  }
  const [total, fatal, injury, tow_away] = counts;
  return {
    counts: { total_crashes: total, fatal, injury, tow_away } as Row,
    rows: page.flatMap((vehicles) => vehicles.map((v) => rowOf(cols.crashes, v))),
  };
}

/**
 * The authority and insurance rows of a DOT from the packed carrier_filings store (jobs/fmcsa/serving-stores.ts):
 * those of the authority query and get-insurance-dockets.sql. Null when the snapshot has no such store.
 */
async function packedFilings(fmcsa: SnapshotReader, dot: number): Promise<{ authority: Row[]; insurance: Row[] } | null> {
  const store = fmcsa.packed('carrier_filings');
  if (!store) return null;
  const cols = await servedColumns(fmcsa);
  const text = await store.get(dot);
  const [authority, insurance] = text == null ? [[], []] : (JSON.parse(text) as [Json[][], Json[][]]);
  return {
    authority: authority.map((v) => rowOf(cols.authority, v)),
    insurance: insurance.map((v) => rowOf(cols.insurance, v)),
  };
}

/**
 * The SMS rows, OOS orders, enforcement cases and revocations of a DOT from the packed carrier_records store
 * (jobs/fmcsa/serving-stores.ts): those of the sms, oos, enforcement and revocations queries. Null when the snapshot
 * has no such store.
 */
async function packedRecords(fmcsa: SnapshotReader, dot: number) {
  const store = fmcsa.packed('carrier_records');
  if (!store) return null;
  const cols = await servedColumns(fmcsa);
  const text = await store.get(dot);
  const [sms, oos, cases, revocations] = text == null ? [[], [], [], []] : (JSON.parse(text) as Json[][][]);
  return {
    sms: sms.map((v) => rowOf(cols.sms_basics, v)),
    oos: oos.map((v) => rowOf(cols.oos_orders, v)),
    cases: cases.map((v) => rowOf(cols.enforcement_cases, v)),
    revocations: revocations.map((v) => rowOf(cols.revocations, v)),
  };
}

type PackedInspection = [inspection: Json[], violations: Json[][], units: Json[][]];

/**
 * A page of inspections, their count, violations and units from the packed inspection_by_dot store
 * (jobs/fmcsa/serving-stores.ts): the rows of the inspections, get-violations.sql and get-units.sql queries
 * (violations and units carry their inspection's insp_date last). Null when the snapshot has no such store.
 */
async function packedInspections(
  fmcsa: SnapshotReader,
  dot: number,
  limit: number,
  offset: number,
): Promise<[Row[], [{ n: number }], Row[], Row[]] | null> {
  const store = fmcsa.packed('inspection_by_dot');
  if (!store) return null;
  const cols = await servedColumns(fmcsa);
  const text = await store.get(dot);
  const { header, page } = text == null ? { header: 0, page: [] } : packedPage(text, offset, limit);
  const inspections: Row[] = [];
  const violations: Row[] = [];
  const units: Row[] = [];
  for (const [insp, viol, unit] of page as PackedInspection[]) {
    const row = rowOf(cols.inspections, insp);
    inspections.push(row);
    for (const v of viol) violations.push(withMembers(rowOf(cols.violations, v), { insp_date: row.insp_date }));
    for (const u of unit) units.push(withMembers(rowOf(cols.inspection_units, u), { insp_date: row.insp_date }));
  }
  return [inspections, [{ n: Number(header) }], violations, units];
}

/** Enforcement: OOS orders, enforcement cases and L&I revocations, each saying when there is no data yet. */
export async function getEnforcement(fmcsa: SnapshotReader, dotRaw: number | string) {
  const dot = parseDot(dotRaw);
  await riskRow(fmcsa, dot);
  const { status } = await snapshotMeta(fmcsa);
  const packed = await packedRecords(fmcsa, dot);
  const [oos, cases, revocations] = packed
    ? [packed.oos, packed.cases, packed.revocations]
    : await Promise.all([fmcsa.query(SQL.oos, { dot }), fmcsa.query(SQL.enforcement, { dot }), fmcsa.query(SQL.revocations, { dot })]);
  const section = (dataset: string, what: string, rows: Row[]) => {
    const available = hasData(status, dataset);
    return { data_available: available, message: available ? null : NO_DATA(what), records: available ? rows : [] };
  };
  const o = section('oos_orders', 'out-of-service order', oos);
  return {
    dot_number: dot,
    oos_orders: withMembers(o, { active: o.records.filter((r) => r.status === 'ACTIVE' && r.rescind_date == null).length }),
    enforcement_cases: section('enforcement', 'enforcement case', cases),
    revocations: section('revocation', 'revocation', revocations),
    data_available: hasData(status, 'enforcement') || hasData(status, 'oos_orders'),
  };
}

/** Which source dataset (sources.dataset) feeds which dataset_status row. */
const SOURCE_TO_STATUS: Record<string, string> = {
  'fmcsa/company-census': 'census',
  'fmcsa/sms-input-census': 'census',
  'fmcsa/crash': 'crash',
  'fmcsa/inspection': 'inspection',
  'fmcsa/inspection-units': 'inspection_units',
  'fmcsa/violations': 'violations',
  'fmcsa/sms-pass-property': 'sms',
  'fmcsa/sms-pass': 'sms',
  'fmcsa/li-revocation': 'revocation',
  'fmcsa/li-carrier': 'authority',
  'fmcsa/li-insurance': 'insurance',
  'fmcsa/oos-orders': 'oos_orders',
  'fmcsa/enforcement-cases': 'enforcement',
};

export interface RiskSnapshotInput {
  dataset: string;
  as_of: string | null;
  retrieved_at: string | null;
  content_sha256: string;
  source_url: string | null;
}

export interface RiskSnapshot {
  dot_number: number;
  snapshot_id: string | null;
  as_of: string | null;
  features: CarrierFeatures;
  assessment: RiskAssessment;
  /** Shared by every carrier of the snapshot (frozen). */
  inputs: readonly RiskSnapshotInput[];
  /**
   * Leaf binding the features to the published `carrier_risk` parquet:
   * kind `snapshot`, content_sha256 = SHA-256 of that table file (manifest),
   * record_sha256 = SHA-256 of the RFC 8785 JSON of `features`.
   */
  origin: OriginLeaf;
}

/**
 * The derived nightly snapshot row of a carrier: its features, the
 * RiskAssessment (pure model; same score as the SQL that ranked all carriers),
 * and the inputs it rests on (dataset, as-of date, retrieval time, SHA-256),
 * ready to embed in a vetting record's snapshot_json.
 */
export async function getRiskSnapshot(fmcsa: SnapshotReader, dotRaw: number | string): Promise<RiskSnapshot> {
  return (await loadRiskSnapshot(fmcsa, dotRaw)).snapshot;
}

/**
 * The inputs every carrier's RiskSnapshot of the served snapshot rests on (dataset, as-of date, retrieval time,
 * SHA-256), built with the snapshot's SnapshotMeta: frozen, since every answer shares them. Issue 22: a
 * freight_compare_carriers call built and canonicalized the same 2.5 KB of inputs for each carrier (about 40 µs each).
 */
function snapshotInputsOf(status: Row[], sources: Row[]): readonly RiskSnapshotInput[] {
  const asOf = new Map(status.map((s) => [String(s.dataset), (s.as_of as string | null) ?? null]));
  return Object.freeze(
    sources.map((s) =>
      Object.freeze({
        dataset: String(s.dataset),
        as_of: asOf.get(SOURCE_TO_STATUS[String(s.dataset)] ?? '') ?? null,
        retrieved_at: (s.retrieved_at as string | null) ?? null,
        content_sha256: String(s.content_sha256),
        source_url: (s.source_url as string | null) ?? null,
      }),
    ),
  );
}

/**
 * getRiskSnapshot's answer and the canonical JSON of its `features` (hashed for the origin leaf) and of its
 * `inputs` (the same array object as `snapshot.inputs`), for a caller that embeds them.
 */
export async function loadRiskSnapshot(
  fmcsa: SnapshotReader,
  dotRaw: number | string,
): Promise<{ snapshot: RiskSnapshot; featuresJson: string; inputsJson: string }> {
  const dot = parseDot(dotRaw);
  const { inputs, inputsJson } = await snapshotMeta(fmcsa);
  // The carrier_risk row: from the packed store (one JSON array in carrier_risk column order, read by DOT
  // without DuckDB: binary search + one positioned read), else from carrier_risk by SQL. Read by position, not
  // as an object of its ~70 columns (issue 22: a freight_compare_carriers call reads two).
  const get = await riskValues(fmcsa, dot);
  const features = featuresOf(get);
  const featuresJson = canonicalJson(features);
  const origin = createLeaf({
    kind: 'snapshot',
    source: 'fmcsa/carrier_risk',
    source_url: null,
    retrieved_at: null,
    content_sha256: fmcsa.manifest?.tables.carrier_risk?.sha256 ?? null,
    record_sha256: sha256Hex(featuresJson),
    parent: null,
  });
  const snapshot: RiskSnapshot = {
    dot_number: dot,
    snapshot_id: fmcsa.manifest?.snapshot_id ?? null,
    as_of: (get('as_of') as string | null) ?? null,
    features,
    assessment: assessCarrier(features),
    inputs,
    origin,
  };
  return { snapshot, featuresJson, inputsJson };
}

const RULE_CODES = new Set(RISK_RULES.map((r) => r.code));

/** Carriers carrying a red flag (optionally one code, one state), highest score first. */
/** `limit`: default 50, max 500 (larger values are clamped and the result says so). */
/** `min_risk` as a score: a number 0-100, or a risk level name (its lower cut, LEVEL_CUTS). */
function minRiskScore(v: number | string | undefined): number | null {
  if (v === undefined || v === '') return null;
  const level = String(v).trim().toUpperCase();
  if (level === 'LOW') return 0;
  if (level in LEVEL_CUTS) return LEVEL_CUTS[level as keyof typeof LEVEL_CUTS];
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 100)
    throw new InvalidInputError(`'min_risk' must be a risk score 0-100 or a level (LOW, MODERATE, HIGH, CRITICAL)`, {
      response: { parameter: 'min_risk' },
    });
  return n;
}

/** Census safety ratings: Satisfactory, Conditional, Unsatisfactory. */
export const SAFETY_RATINGS = ['S', 'C', 'U'] as const;
/** The red-flag codes of the risk model (the `code` values). */
export const RED_FLAG_CODES = RISK_RULES.map((r) => r.code);

/**
 * Carriers with red flags, highest risk first; `cursor` is the `next_cursor` of the previous page (null on the last). Filters (spec 001, freight_red_flag_search): `code` one flag,
 * `state` physical state, `min_risk` a minimum risk_score (0-100) or risk level, `safety_rating` S, C or U.
 */
export async function searchRedFlags(
  fmcsa: SnapshotReader,
  q: { code?: string; state?: string; min_risk?: number | string; safety_rating?: string; limit?: number; cursor?: string },
) {
  const code = q.code?.trim() ? q.code.trim().toUpperCase() : null;
  if (code && !RULE_CODES.has(code))
    throw new InvalidInputError(`unknown red flag code '${code}'; known: ${[...RULE_CODES].join(', ')}`, {
      response: { parameter: 'code' },
    });
  const state = q.state?.trim() ? q.state.trim().toUpperCase() : null;
  if (state && !/^[A-Z]{2}$/.test(state))
    throw new InvalidInputError(`'state' must be a 2-letter code`, { response: { parameter: 'state' } });
  const minRisk = minRiskScore(q.min_risk);
  const rating = q.safety_rating?.trim() ? q.safety_rating.trim().toUpperCase().slice(0, 1) : null;
  if (rating && !(SAFETY_RATINGS as readonly string[]).includes(rating))
    throw new InvalidInputError(`'safety_rating' must be S (satisfactory), C (conditional) or U (unsatisfactory)`, {
      response: { parameter: 'safety_rating' },
    });
  const { limit, clamped } = clampLimit(q.limit, 50, 500);
  const snapshotId = fmcsa.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(q.cursor, snapshotId);
  const filter = { code, state, minRisk, rating, limit, offset };
  const { rows, total } = (await packedRedFlagPage(fmcsa, filter)) ?? (await redFlagScan(fmcsa, filter));
  return {
    code,
    state,
    min_risk: minRisk,
    safety_rating: rating,
    total,
    limit,
    ...(clamped ? { limit_clamped: clamped } : {}),
    results: rows,
    next_cursor: nextCursorOf(offset, rows.length, total, snapshotId),
  };
}

interface RedFlagFilter {
  code: string | null;
  state: string | null;
  minRisk: number | null;
  rating: string | null;
  limit: number;
  offset: number;
}

/** The codes red_flag_lists was numbered by equal this code's (a store checked once). */
const redFlagCodesOk = new WeakMap<PackedStore, Promise<boolean>>();

/**
 * A page of red flags from the packed red_flag_lists and red_flag_row stores (jobs/fmcsa/red-flag-store.ts): the
 * rows and total of redFlagScan with no DuckDB query: the filter's header, the blocks of the page
 * (and, with min_risk, the block where the scores fall below it), one row read per carrier. Null when the snapshot
 * has no such stores (or they were numbered by other codes): the SQL answers.
 */
async function packedRedFlagPage(fmcsa: SnapshotReader, f: RedFlagFilter): Promise<{ rows: Row[]; total: number } | null> {
  const lists = fmcsa.packed(RED_FLAG_STORES.lists);
  const rowStore = fmcsa.packed(RED_FLAG_STORES.rows);
  if (!lists || !rowStore) return null;
  let ok = redFlagCodesOk.get(lists);
  if (!ok) {
    ok = lists.get(RED_FLAG_CODES_KEY).then((t) => t !== null && t === JSON.stringify(RED_FLAG_CODES));
    redFlagCodesOk.set(lists, ok);
  }
  if (!(await ok)) return null;
  const key = redFlagListKey(RED_FLAG_CODES, f.code, f.state, f.rating);
  const header = key === null ? null : await lists.get(key);
  if (key === null || header === null) return { rows: [], total: 0 };
  const [count, firsts] = JSON.parse(header) as [number, Array<number | null>];
  const block = async (b: number) => JSON.parse((await lists.get(key + 1 + b))!) as [number[], Array<number | null>];
  // Scores descend along the list (nulls last), so the carriers at or above min_risk are a prefix of it.
  const atLeast = (s: number | null) => s !== null && s >= f.minRisk!;
  let total = count;
  if (f.minRisk !== null) {
    let b = -1;
    while (b + 1 < firsts.length && atLeast(firsts[b + 1]!)) b++;
    total = b < 0 ? 0 : b * RED_FLAG_BLOCK + (await block(b))[1].filter(atLeast).length;
  }
  const end = Math.min(total, f.offset + f.limit);
  const gs: number[] = [];
  for (let b = Math.floor(f.offset / RED_FLAG_BLOCK); b * RED_FLAG_BLOCK < end; b++) {
    const [ids] = await block(b);
    for (let i = 0; i < ids.length; i++) {
      const pos = b * RED_FLAG_BLOCK + i;
      if (pos >= f.offset && pos < end) gs.push(ids[i]!);
    }
  }
  const rows = await Promise.all(
    gs.map(async (g) => {
      const values = JSON.parse((await rowStore.get(g))!) as Json[];
      const row: Row = {};
      RED_FLAG_ROW_COLUMNS.forEach((c, i) => {
        row[c] = values[i] ?? null;
      });
      return row;
    }),
  );
  // An empty page reports total 0, as the scan's window count does.
  return { rows, total: rows.length ? total : 0 };
}

/** A page of red flags by a scan of carrier_risk (snapshots published before the packed red-flag stores existed). */
async function redFlagScan(fmcsa: SnapshotReader, f: RedFlagFilter): Promise<{ rows: Row[]; total: number }> {
  const rows = await fmcsa.query(SQL.redFlags, {
    code: f.code,
    state: f.state,
    min_risk: f.minRisk,
    safety_rating: f.rating,
    limit: f.limit,
    offset: f.offset,
  });
  return { rows: rows.map(({ total: _t, ...r }) => r), total: rows.length ? Number(rows[0].total) : 0 };
}

/** Record counts per dataset and as-of dates, the files loaded and reject counts. */
export function getDatasetStatus(fmcsa: SnapshotReader): ReturnType<typeof buildDatasetStatus> {
  // Everything in it is fixed by the served snapshot: built once per manifest (issue 22: the rejects count ran per
  // request), the same answer object after that. A failed build is not kept.
  const m = fmcsa.manifest;
  if (!m) return buildDatasetStatus(fmcsa);
  let p = datasetStatusAnswers.get(m);
  if (!p) {
    p = buildDatasetStatus(fmcsa);
    datasetStatusAnswers.set(m, p);
    p.catch(() => datasetStatusAnswers.delete(m));
  }
  return p;
}
const datasetStatusAnswers = new WeakMap<object, ReturnType<typeof buildDatasetStatus>>();

async function buildDatasetStatus(fmcsa: SnapshotReader) {
  const { status, sources } = await snapshotMeta(fmcsa);
  const rejects = await fmcsa.query(SQL.rejects);
  return {
    snapshot_id: fmcsa.manifest?.snapshot_id ?? null,
    published_at: fmcsa.manifest?.published_at ?? null,
    datasets: status.map((s) =>
      withMembers(s, { records: Number(s.records), message: s.data_available ? null : NO_DATA(String(s.dataset).replace(/_/g, ' ')) }),
    ),
    sources,
    rejects,
  };
}

/** The answer schema of getDatasetStatus, for families that serve it inside their own answers (/api/status). */
export { datasetStatusAnswer } from './carriers.schema.ts';
/** The carrier search's answer schema, for families that serve its rows inside their own answers (/ai/query). */
export { carrierSearchAnswer } from './carriers.schema.ts';
