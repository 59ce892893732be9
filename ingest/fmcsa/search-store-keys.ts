/**
 * Keys and layout of the packed stores of the search-like FMCSA routes (jobs/fmcsa/red-flag-store.ts and
 * carrier-name-index.ts write them, service/carriers/carriers.queries.ts reads them): shared by both sides, so the
 * numbering is defined once.
 *
 *   red_flag_lists  one list per filter (code or any, state or any, safety rating or any): the `g` of its carriers
 *                   (red_flag_rows' answer order: risk_score DESC, dot_number) in blocks of RED_FLAG_BLOCK entries
 *                   with their risk scores, plus a header [count, [first risk_score of each block]]. Key
 *                   `redFlagListKey(codes, code, state, rating, slot)`: slot 0 the header, 1 + b block b
 *                   ([[g, …], [risk_score, …]]). Key RED_FLAG_CODES_KEY (a slot no list reaches) holds the codes the
 *                   keys were numbered by: a reader whose codes differ does not use the store.
 *   red_flag_row    key g: the answer row's values, as JSON, in RED_FLAG_ROW_COLUMNS order.
 *   carrier_name_hits  per indexed term q (a dictionary term of the name index, NAME_HITS_TERMS_KEY lists them in
 *                   order: q's number is its position) and state key (0 any, else the state's): the first
 *                   NAME_HITS_CAP DOTs the name search answers for q, in its order, in blocks of NAME_HITS_BLOCK
 *                   (key `nameHitsKey(qi, state, b)`), and per q a header {state or '*': number of matches}
 *                   (key `nameHitsKey(qi, null, NAME_HITS_HEADER)`).
 */

/** Store names (packed/<name>.{tsv,idx} of the snapshot). */
export const RED_FLAG_STORES = { lists: 'red_flag_lists', rows: 'red_flag_row' } as const;

/** Entries per block: a page of the default 50 reads one block, of the maximum 500 two. */
export const RED_FLAG_BLOCK = 500;
/** Slots per filter key: the header and up to SLOTS - 2 blocks (8.2 M carriers per list). */
export const SLOTS = 16_384;
/** The key of the record listing the codes the keys were numbered by. */
export const RED_FLAG_CODES_KEY = SLOTS - 1;
/** State keys: 0 any, 1 + (A-Z)·26 + (A-Z) for a 2-letter state. */
export const STATE_KEYS = 677;
/** Safety rating keys: 0 any, then S, C, U (carriers.queries.ts SAFETY_RATINGS). */
export const RATINGS = ['S', 'C', 'U'] as const;

/** Columns of a red-flag answer row (search-red-flags.sql's select list without total), the order of red_flag_row. */
export const RED_FLAG_ROW_COLUMNS = [
  'dot_number',
  'legal_name',
  'phy_state',
  'safety_rating',
  'risk_score',
  'risk_level',
  'recommendation',
  'red_flag_codes',
] as const;

/** The filter number of (code index: 0 any, 1 + position in `codes`; state or null; rating or null). */
function filterOf(codeIndex: number, state: string | null, rating: string | null): number {
  const s = stateKeyOf(state);
  const r = rating == null ? 0 : 1 + RATINGS.indexOf(rating as (typeof RATINGS)[number]);
  return (codeIndex * STATE_KEYS + s) * (RATINGS.length + 1) + r;
}

/**
 * The key of a filter's slot in red_flag_lists (slot 0 the header, 1 + b block b), or null when the filter has
 * no list: a code outside `codes`, a state not of 2 letters A-Z, a rating not S, C or U.
 */
export function redFlagListKey(codes: readonly string[], code: string | null, state: string | null, rating: string | null, slot = 0) {
  const ci = code == null ? 0 : codes.indexOf(code) + 1;
  if (ci === 0 && code != null) return null;
  if (state != null && !/^[A-Z]{2}$/.test(state)) return null;
  if (rating != null && !(RATINGS as readonly string[]).includes(rating)) return null;
  return filterOf(ci, state, rating) * SLOTS + slot;
}

/** Whether every key of `codes` fits an INTEGER key. */
export function redFlagKeysFit(codes: readonly string[]): boolean {
  return (codes.length + 1) * STATE_KEYS * (RATINGS.length + 1) * SLOTS <= 2 ** 31 - 1;
}

/** The packed store of the name search's precomputed answers. */
export const CARRIER_NAME_HITS = 'carrier_name_hits';

/**
 * The packed store of each carrier's search row, by DOT: the row's values as one JSON array, the census columns
 * (SEARCH_ROW_CENSUS_COLUMNS) then the risk columns (SEARCH_ROW_RISK_COLUMNS), each as the packed carrier_census
 * and carrier_snapshot stores give it. A search page reads one short record per row instead of a carrier's census
 * record and its snapshot record (43 and 73 values: issue 22, 42 % of a name search's CPU in the server at full scale).
 */
export const CARRIER_SEARCH_ROW = 'carrier_search_row';

/** A search row's census columns (search-carriers-page.sql's select list): its key, and the `carriers` column read. */
export const SEARCH_ROW_CENSUS_COLUMNS: ReadonlyArray<readonly [key: string, column: string]> = [
  ['dot_number', 'dot_number'],
  ['legal_name', 'legal_name'],
  ['dba_name', 'dba_name'],
  ['phy_city', 'phy_city'],
  ['phy_state', 'phy_state'],
  ['status_code', 'status_code'],
  ['carrier_operation', 'carrier_operation'],
  ['power_units', 'power_units'],
  ['total_drivers', 'total_drivers'],
  ['mc_number', 'docket1'],
];

/** A search row's risk columns, after its census columns (search-carriers.sql's join of carrier_risk). */
export const SEARCH_ROW_RISK_COLUMNS = ['risk_score', 'risk_level', 'recommendation'] as const;

/** The state key of a 2-letter state (1 + (A-Z)·26 + (A-Z)), 0 for any state. */
export function stateKeyOf(state: string | null): number {
  return state == null ? 0 : 1 + (state.charCodeAt(0) - 65) * 26 + (state.charCodeAt(1) - 65);
}

/** DOTs per block of a name-hits list: a page (100 at most) reads one or two. */
export const NAME_HITS_BLOCK = 200;
/** Entries kept per list: pages beyond (offsets past MCP's 10,000) are answered by the SQL. */
export const NAME_HITS_CAP = 10_200;
/** Slots per (term, state): the blocks, then the header in the last slot. */
export const NAME_HITS_SLOTS = 64;
export const NAME_HITS_HEADER = NAME_HITS_SLOTS - 1;
/** Indexed terms at most, so that every key fits an INTEGER (the key of the term list is the largest). */
export const NAME_HITS_MAX_TERMS = 40_000;
/** The key of the record listing the indexed terms, in order (JSON array). */
export const NAME_HITS_TERMS_KEY = 2 ** 31 - 1;

/** The key of block `slot` of the list of term number `qi` in `state` (null: any state). */
export function nameHitsKey(qi: number, state: string | null, slot: number): number {
  return (qi * STATE_KEYS + stateKeyOf(state)) * NAME_HITS_SLOTS + slot;
}

/**
 * The DOTs and total of a name search's page from a carrier_name_hits store (`get` reads a record by key; `terms`
 * is the store's term list): the answer of search-carriers-by-term.sql for `name` (lower-case) in `state` (or any),
 * or null when the store does not hold it (`name` not an indexed term, or a page past NAME_HITS_CAP). An empty page
 * reports total 0, as the SQL's window count does.
 */
export async function nameHitsPage(
  get: (key: number) => Promise<string | null>,
  terms: readonly string[],
  name: string,
  state: string | null,
  limit: number,
  offset: number,
): Promise<{ dots: number[]; total: number } | null> {
  // Binary search in term order (DuckDB's VARCHAR order; terms are ASCII [a-z0-9], where JS compares the same).
  let lo = 0;
  let hi = terms.length - 1;
  let qi = -1;
  while (lo <= hi && qi < 0) {
    const mid = (lo + hi) >>> 1;
    const t = terms[mid]!;
    if (t < name) lo = mid + 1;
    else if (t > name) hi = mid - 1;
    else qi = mid;
  }
  if (qi < 0) return null;
  const header = await get(nameHitsKey(qi, null, NAME_HITS_HEADER));
  if (header === null) return null;
  const total = (JSON.parse(header) as Record<string, number>)[state ?? '*'] ?? 0;
  if (offset >= total) return { dots: [], total: 0 };
  const end = Math.min(total, offset + limit);
  if (end > NAME_HITS_CAP) return null;
  const dots: number[] = [];
  for (let b = Math.floor(offset / NAME_HITS_BLOCK); b * NAME_HITS_BLOCK < end; b++) {
    const text = await get(nameHitsKey(qi, state, b));
    if (text === null) return null;
    const block = JSON.parse(text) as number[];
    for (let i = 0; i < block.length; i++) {
      const pos = b * NAME_HITS_BLOCK + i;
      if (pos >= offset && pos < end) dots.push(block[i]!);
    }
  }
  return { dots, total };
}
