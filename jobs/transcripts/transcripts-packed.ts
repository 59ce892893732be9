/**
 * The transcripts domain's packed stores (issue 22): what the transcript routes read, written at publish after the
 * derive, so that an answer is one binary search and one positioned read (lib/warehouse/packed-store.ts) instead of
 * two to four DuckDB queries:
 *
 * - `transcripts_company` (per ticker: transcripts and call dates, /api/company/{ticker}/transcripts),
 * - `transcript_facts_company` (per ticker: every fact, /api/company/{ticker}/facts filters and pages it),
 * - `transcript_search_topics` (per topic and for all topics: the topic-company rows of /api/search/transcripts),
 * - `transcript_search_facts` (per topic and type filter: the cross-company facts in blocks of 500 rows).
 *
 * Keys are text keys (`textKey` of the ticker, topic or filter text); texts sharing a key share one record, a list
 * the reader picks its own entry from. Each record has the same columns, order and origin leaves as the SQL it
 * replaces (service/transcripts/*.sql); test/transcripts/transcripts-packed.test.ts compares every answer.
 *
 * Every table of the domain is rebuilt whole at publish (the derive re-dedups `transcripts` over every row), and
 * so are the stores; a publish whose four tables have the previous snapshot's parts hard-links them instead. The
 * domain is small (60 calls at full scale); a store's SELECT aggregates one list per key, so its memory is that of
 * the facts table, far below the publish memory limit.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Store name → its SELECT (columns k, v). Names are read by service/transcripts/transcripts.queries.ts. */
export const TRANSCRIPTS_PACKED: Record<string, string> = {
  transcripts_company: loadSql('./packed-company.sql', import.meta.url),
  transcript_facts_company: loadSql('./packed-facts.sql', import.meta.url),
  transcript_search_topics: loadSql('./packed-search-topics.sql', import.meta.url),
  transcript_search_facts: loadSql('./packed-search-facts.sql', import.meta.url),
};

const SOURCE_TABLES = ['transcripts', 'transcript_facts', 'transcript_topics', 'transcript_call_dates'];

/** Writes every transcripts store, or links the previous snapshot's when no source table changed. */
export async function writeTranscriptsPacked(_conn: DuckDBConnection, ctx: DeriveContext): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  let unchanged = ctx.previous !== null;
  for (const t of SOURCE_TABLES) if (unchanged && !(await ctx.samePartsAsPrevious(t))) unchanged = false;
  for (const [name, select] of Object.entries(TRANSCRIPTS_PACKED)) {
    const t = Date.now();
    if (unchanged && (await ctx.linkPreviousPacked(name))) timings[`${name}_linked`] = 1;
    else await ctx.writePacked(name, select);
    timings[name] = Date.now() - t;
  }
  return timings;
}
