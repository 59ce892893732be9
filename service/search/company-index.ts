/**
 * In-memory company search index, built once per registry snapshot (about
 * 10k primary tickers at full scale, a few MB) and dropped when the snapshot
 * changes. A query is a linear `includes` scan of every token (AND), which
 * costs well under a millisecond, instead of a DuckDB scan per request
 * (DuckDB point/scan queries top out near 1,100/s here: tech.md).
 *
 * What is matched (spec 000: companies match on name, summary and tags): the ticker, the name, every fact the
 * identity card's summary states (SIC code and description, headquarters city and state, state of incorporation,
 * exchange, status) and its tags (SIC description, exchange, filer category, status).
 *
 * The companies a query can match are found through a word index of `hay` (word-index.ts: the same set as the
 * `includes` scan, since a query token is a run of word characters), so a search visits only its matches, not
 * every company (the scan cost 3-6 ms of CPU per search at full scale, 8,449 companies: the whole of a warm
 * request, issue 22); the ranking below sorts them into one total order, so the visiting order does not matter.
 *
 * Ranking: exact ticker 100, exact name 95, name prefix 80, name contains the
 * whole query 60, name contains the first token 40, other fields 20; +5 for an
 * active company; ties by the SEC ticker file's order (market value), then name.
 */
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { WordIndex } from './word-index.ts';

const LOAD = loadSql('./company-index.sql', import.meta.url);

export interface IndexedCompany {
  ticker: string;
  cik: number;
  name: string;
  exchange: string | null;
  status: string;
  sic_description: string | null;
  rank: number | null;
  lname: string;
  hay: string;
}

/** A ranked search hit: the indexed company without its search-only fields, plus its score. */
export type CompanyHit = Omit<IndexedCompany, 'rank' | 'lname' | 'hay'> & { score: number };

const cache = new WeakMap<SnapshotReader, { snapshot: string; index: Promise<IndexedCompany[]> }>();
/** The word index of each company index's `hay` (ids = positions), built with it. */
const hayWords = new WeakMap<IndexedCompany[], WordIndex>();

/** The word index of `index` (built on first use for an index made elsewhere, e.g. by a test). */
function hayWordsOf(index: IndexedCompany[]): WordIndex {
  let w = hayWords.get(index);
  if (!w) {
    w = WordIndex.build(index.length, (i) => [index[i]!.hay]);
    hayWords.set(index, w);
  }
  return w;
}

/** rankCompanies' order after the score: rank (none last), then name, then ticker. */
function compareStatic(a: IndexedCompany, b: IndexedCompany): number {
  return (
    (a.rank ?? Infinity) - (b.rank ?? Infinity) ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
    (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0)
  );
}

/** Per company of an index: its lower-cased ticker and its position in compareStatic's order (built once per index). */
const rankings = new WeakMap<IndexedCompany[], { lticker: string[]; position: Int32Array }>();
function rankingOf(index: IndexedCompany[]): { lticker: string[]; position: Int32Array } {
  let r = rankings.get(index);
  if (!r) {
    const byOrder = index.map((_, i) => i).sort((a, b) => compareStatic(index[a]!, index[b]!) || a - b);
    const position = new Int32Array(index.length);
    byOrder.forEach((id, k) => {
      position[id] = k;
    });
    r = { lticker: index.map((c) => c.ticker.toLowerCase()), position };
    rankings.set(index, r);
  }
  return r;
}

/** A company's score for the query (rankCompanies' rule), from its lower-cased ticker. */
function scoreOf(c: IndexedCompany, lticker: string, q: string, t0: string): number {
  const base =
    lticker === q ? 100 : c.lname === q ? 95 : c.lname.startsWith(q) ? 80 : c.lname.includes(q) ? 60 : c.lname.includes(t0) ? 40 : 20;
  return base + (c.status === 'active' ? 5 : 0);
}

function hitOf(c: IndexedCompany, score: number): CompanyHit {
  return {
    ticker: c.ticker,
    cik: c.cik,
    name: c.name,
    exchange: c.exchange,
    status: c.status,
    sic_description: c.sic_description,
    score,
  };
}

/** The index of the reader's current snapshot (built on first use). */
export function companyIndex(reader: SnapshotReader): Promise<IndexedCompany[]> {
  const id = reader.manifest?.snapshot_id ?? '';
  const c = cache.get(reader);
  if (c && c.snapshot === id) return c.index;
  const index = reader.query(LOAD).then((rows) => {
    const companies: IndexedCompany[] = rows.map((r) => ({
      ticker: String(r.ticker),
      cik: Number(r.cik),
      name: String(r.name ?? ''),
      exchange: (r.exchange as string | null) ?? null,
      status: String(r.status),
      sic_description: (r.sic_description as string | null) ?? null,
      rank: r.rank == null ? null : Number(r.rank),
      lname: String(r.lname),
      hay: String(r.hay),
    }));
    hayWordsOf(companies); // built with the index (the start-up warm-up awaits it), not by the first search
    return companies;
  });
  cache.set(reader, { snapshot: id, index });
  index.catch(() => cache.delete(reader));
  return index;
}

/** Ranked companies matching every token; `q` is the whole lower-cased query. */
export function searchCompanyIndex(
  index: IndexedCompany[],
  q: string,
  tokens: string[],
  limit: number,
  count?: { total: number },
): CompanyHit[] {
  // Exactly the companies whose hay contains every token (word-index.ts contract), ascending.
  const ids = hayWordsOf(index).match(tokens);
  // rankCompanies' ranking, with the order after the score precomputed per index (a position), so a search sorts
  // numbers, not names, and lower-cases no ticker (issue 22). Tickers of an index are distinct, so the order is total.
  const { lticker, position } = rankingOf(index);
  const t0 = tokens[0]!;
  const scores = new Int32Array(ids.length);
  const order = new Int32Array(ids.length);
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    scores[k] = scoreOf(index[id]!, lticker[id]!, q, t0);
    order[k] = k;
  }
  order.sort((a, b) => scores[b]! - scores[a]! || position[ids[a]!]! - position[ids[b]!]!);
  if (count) count.total = ids.length;
  const n = Math.min(limit, ids.length);
  const out: CompanyHit[] = new Array(n);
  for (let k = 0; k < n; k++) out[k] = hitOf(index[ids[order[k]!]!]!, scores[order[k]!]!);
  return out;
}

/**
 * The search's ranking of the matching companies: exact ticker, exact name, name prefix, name contains the query,
 * name contains the first token, other; active companies first within a score, then by rank, name and ticker.
 */
export function rankCompanies(
  matches: IndexedCompany[],
  q: string,
  tokens: string[],
  limit: number,
  count?: { total: number },
): CompanyHit[] {
  const t0 = tokens[0]!;
  const hits: Array<{ c: IndexedCompany; score: number }> = [];
  for (const c of matches) hits.push({ c, score: scoreOf(c, c.ticker.toLowerCase(), q, t0) });
  hits.sort(
    (a, b) =>
      b.score - a.score ||
      (a.c.rank ?? Infinity) - (b.c.rank ?? Infinity) ||
      (a.c.name < b.c.name ? -1 : a.c.name > b.c.name ? 1 : 0) ||
      (a.c.ticker < b.c.ticker ? -1 : 1),
  );
  if (count) count.total = hits.length;
  return hits.slice(0, limit).map(({ c, score }) => hitOf(c, score));
}
