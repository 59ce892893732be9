/**
 * `/api/search?q=`: companies (name, summary, tags), people (name, notes) and
 * timeline events, each ranked, transport-free (HTTP and MCP call it).
 *
 * Matching is lower-cased containment of every query token (AND), at most 5
 * tokens; people and events are found through per-snapshot word indexes
 * (word-index.ts) that give the same answer as a containment scan. Companies, people and timeline events come from in-memory indexes
 * built once per snapshot (company-index.ts, text-index.ts), so a search never
 * waits for a DuckDB connection. Tables the snapshot does not have give empty
 * lists.
 */
import { withMembers } from '../../lib/objects.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { companyIndex, searchCompanyIndex, type IndexedCompany } from './company-index.ts';
import { searchEvents, searchPeople, textIndexes } from './text-index.ts';
import { splitWords } from './word-index.ts';
import { decodeOffsetsCursor, nextOffsetsCursorOf } from '../platform/pagination.ts';

/** The three ranked lists of a search, each its own `category`. */
export const SEARCH_CATEGORIES = ['companies', 'people', 'events'] as const;
export type SearchCategory = (typeof SEARCH_CATEGORIES)[number];

export interface SearchOptions {
  q: string;
  /** Results per list a page. */
  limit: number;
  /** `next_cursor` of the previous page (platform/pagination.ts). */
  cursor?: string;
  /** One list alone (its cursors name it alone); default: the three, walked together. */
  category?: SearchCategory;
}

/** Lower-cased tokens of a query (letters, digits, `&`, `.`, `-`, `'`), at most 5: the word index's own word class. */
export function tokenize(q: string): string[] {
  return splitWords(q.toLowerCase()).slice(0, 5);
}

const cikMaps = new WeakMap<IndexedCompany[], Map<number, IndexedCompany>>();
/** CIK → primary company of an index (built once per index). */
function cikMapOf(index: IndexedCompany[]): Map<number, IndexedCompany> {
  let m = cikMaps.get(index);
  if (!m) {
    m = new Map(index.map((c) => [c.cik, c]));
    cikMaps.set(index, m);
  }
  return m;
}

/**
 * Runs the three searches and returns ranked results. Pages (platform/pagination.ts): each list's rows are ranked in
 * a deterministic order (score, then a unique tie-break), and a page holds the next `limit` rows of each list
 * (`category`: of that list alone; the others are then empty). The first page without `category` is the one-page
 * answer every caller got before paging: the top `limit` of each list.
 */
export async function searchRegistry(registry: SnapshotReader, opts: SearchOptions, baseUrl: string) {
  const query = opts.q.trim();
  const tokens = tokenize(query);
  if (tokens.length === 0)
    throw new InvalidInputError("parameter 'q' must contain at least one letter or digit", { response: { parameter: 'q' } });
  const lists: readonly SearchCategory[] = opts.category ? [opts.category] : SEARCH_CATEGORIES;
  const snapshotId = registry.manifest?.snapshot_id ?? null;
  const offsets = decodeOffsetsCursor(opts.cursor, snapshotId, lists);
  // A list's page is the top `offset + limit` ranked rows with the first `offset` dropped: the rankings are total
  // orders, so the top N+k starts with the top N. A list not on this page is still counted (`total`, `totals`).
  const depth = (c: SearchCategory) => (lists.includes(c) ? offsets[c]! + opts.limit : 1);
  const skip = (c: SearchCategory) => (lists.includes(c) ? offsets[c]! : Number.POSITIVE_INFINITY);
  const q = query.toLowerCase();
  const [companies, text] = await Promise.all([companyIndex(registry), textIndexes(registry)]);
  const byCik = cikMapOf(companies);
  const counts = { companies: { total: 0 }, people: { total: 0 }, events: { total: 0 } };
  const companyHits = searchCompanyIndex(companies, q, tokens, depth('companies'), counts.companies).slice(skip('companies'));
  const people = searchPeople(text.people, q, tokens, depth('people'), text.peopleWords, counts.people, text.peopleNameWords).slice(
    skip('people'),
  );
  const events = searchEvents(text.events, q, tokens, depth('events'), text.eventWords, counts.events, text.eventTitleWords).slice(
    skip('events'),
  );
  const returned = { companies: companyHits.length, people: people.length, events: events.length };
  const next_cursor = nextOffsetsCursorOf(
    Object.fromEntries(lists.map((c) => [c, { offset: offsets[c]!, returned: returned[c], total: counts[c].total }])),
    snapshotId,
  );
  return {
    query,
    results: {
      companies: companyHits.map((c) => withMembers(c, { url: `${baseUrl}/api/company/${encodeURIComponent(c.ticker)}` })),
      people: people.map(({ doc: p, score }) => ({
        name: p.name,
        person_cik: p.person_cik,
        notes: p.notes,
        tickers: p.tickers,
        roles: p.roles,
        score,
        url: `${baseUrl}/api/person/${encodeURIComponent(p.name)}`,
      })),
      events: events.map(({ doc: e, score }) => {
        const co = byCik.get(e.cik);
        return {
          event_type: e.event_type,
          title: e.title,
          summary: e.summary,
          event_date: e.event_date,
          filing_date: e.filing_date,
          accession: e.accession,
          document_url: e.document_url,
          cik: e.cik,
          ticker: co?.ticker ?? null,
          company_name: co?.name ?? null,
          score,
        };
      }),
    },
    // Spec 000: `total` is the number of matches (every list), not the number returned (at most `limit` a list).
    total: counts.companies.total + counts.people.total + counts.events.total,
    totals: { companies: counts.companies.total, people: counts.people.total, events: counts.events.total },
    next_cursor,
  };
}
