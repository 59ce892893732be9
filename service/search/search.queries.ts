/**
 * `/api/search?q=`: companies (name, summary, tags), people (name, notes) and
 * timeline events, each ranked, transport-free (HTTP and MCP call it).
 *
 * Matching is lower-cased containment of every query token (AND), at most 5
 * tokens. Companies come from an in-memory index built once per snapshot
 * (company-index.ts); people and timeline events are lower-cased `contains()`
 * scans in DuckDB that stop at an early LIMIT of candidates before ranking
 * (tech.md: 83 ms full scan → 1–2 ms with an early LIMIT).
 * Tables the registry does not have yet (people, timeline) give empty lists.
 */
import { InvalidInputError } from '../../lib/errors.ts';
import type { Params } from '../../lib/warehouse/duckdb.ts';
import { companyIndex, searchCompanyIndex } from './company-index.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { pickColumn, snapshotSchema } from './registry-schema.ts';


/**
 * Every token must be in one of `fields` (already lower-cased expressions).
 * Fields are tested separately: lower-casing a concatenation allocates per row
 * and measured 10x slower than per-column `contains` on the timeline.
 */
const tokenFilter = (fields: string[]) =>
  [0, 1, 2, 3, 4].map((i) => `(${i === 0 ? '' : `$t${i} IS NULL OR `}${fields.map((f) => `contains(${f}, $t${i})`).join(' OR ')})`).join(' AND ');

/** People grouped per person; `notes` joins the haystack when the table has it. Candidates capped before ranking. */
function peopleSql(hasNotes: boolean): string {
  const fields = hasNotes ? ['lower(person_name)', 'lower(notes)'] : ['lower(person_name)'];
  return /* sql */ `WITH cand AS (
  SELECT * FROM people WHERE ${tokenFilter(fields)} LIMIT 2000
)
SELECT person_name AS name, any_value(person_cik) AS person_cik,
       ${hasNotes ? 'any_value(notes)' : 'NULL'} AS notes,
       list(DISTINCT ticker ORDER BY ticker) FILTER (WHERE ticker IS NOT NULL) AS tickers,
       list(DISTINCT role ORDER BY role) AS roles,
       max(CASE WHEN lower(person_name) = $q THEN 100 WHEN starts_with(lower(person_name), $q) THEN 80
                WHEN contains(lower(person_name), $q) THEN 60 ELSE 30 END) AS score
FROM cand
GROUP BY person_key, person_name
ORDER BY score DESC, name
LIMIT $limit`;
}

const EVENTS_SQL = /* sql */ `WITH cand AS (
  SELECT cik, accession, event_type, title, summary, event_date, filing_date, document_url
  FROM timeline WHERE ${tokenFilter(['lower(title)', 'lower(summary)', 'event_type'])} LIMIT 5000
)
SELECT e.event_type, e.title, e.summary, e.event_date, e.filing_date, e.accession, e.document_url, e.cik,
       l.ticker, l.name AS company_name,
       (CASE WHEN contains(lower(e.title), $q) THEN 60 ELSE 30 END) AS score
FROM cand e
LEFT JOIN company_lookup l ON l.cik = e.cik AND l.is_primary
ORDER BY score DESC, coalesce(e.event_date, e.filing_date) DESC NULLS LAST, e.accession
LIMIT $limit`;

export interface SearchOptions {
  q: string;
  limit: number;
}

/** Lower-cased tokens of a query (letters, digits, `&`, `.`, `-`), at most 5. */
export function tokenize(q: string): string[] {
  return q.toLowerCase().split(/[^\p{L}\p{N}&.\-']+/u).filter((t) => t.length > 0).slice(0, 5);
}

/** Runs the three searches in parallel and returns ranked results. */
export async function searchRegistry(registry: SnapshotReader, opts: SearchOptions, baseUrl: string) {
  const query = opts.q.trim();
  const tokens = tokenize(query);
  if (tokens.length === 0) throw new InvalidInputError("parameter 'q' must contain at least one letter or digit", { response: { parameter: 'q' } });
  const params: Params = { q: query.toLowerCase(), limit: opts.limit };
  for (let i = 0; i < 5; i++) params[`t${i}`] = tokens[i] ?? null;
  const schema = await snapshotSchema(registry);
  const hasPeople = schema.get('people')?.has('person_name') && schema.get('people')?.has('person_key');
  const hasTimeline = schema.get('timeline')?.has('title');
  const [companies, people, events] = await Promise.all([
    companyIndex(registry).then((idx) => searchCompanyIndex(idx, query.toLowerCase(), tokens, opts.limit)),
    hasPeople ? registry.query(peopleSql(pickColumn(schema, 'people', ['notes']) !== null), params) : Promise.resolve([]),
    hasTimeline ? registry.query(EVENTS_SQL, params) : Promise.resolve([]),
  ]);
  return {
    query,
    results: {
      companies: companies.map((c) => ({ ...c, url: `${baseUrl}/api/company/${encodeURIComponent(c.ticker)}` })),
      people: people.map((p) => ({ ...p, score: Number(p.score), url: `${baseUrl}/api/person/${encodeURIComponent(String(p.name))}` })),
      events: events.map((e) => ({ ...e, cik: Number(e.cik), score: Number(e.score) })),
    },
    total: companies.length + people.length + events.length,
  };
}
