/**
 * Transcript queries, transport-free (HTTP routes and MCP tools call these).
 */
import { withMembers } from '../../lib/objects.ts';
import { InvalidInputError, NotFoundError, PipelineError } from '../../lib/errors.ts';
import { loadSql, type Row } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { clampLimit } from '../platform/http.ts';
import { decodeCursor, decodeOffsetsCursor, nextCursorOf, nextOffsetsCursorOf } from '../platform/pagination.ts';
import { TOPIC_PATTERNS } from '../../ingest/transcripts/facts.ts';
import { parseCompanyRef } from '../company/company.queries.ts';
import { findCompanyMemo } from '../registry-layers/registry-layers.queries.ts';
import { textKey } from '../../lib/warehouse/packed-store.ts';

const BY_TICKER = loadSql('./transcripts-by-ticker.sql', import.meta.url);
const FACTS = loadSql('./facts-by-ticker.sql', import.meta.url);
const SEARCH_FACTS = loadSql('./search-facts.sql', import.meta.url);
const SEARCH_TOPICS = loadSql('./search-topics.sql', import.meta.url);
const FACTS_COUNT = loadSql('./facts-count-by-ticker.sql', import.meta.url);
const SEARCH_FACTS_COUNT = loadSql('./search-facts-count.sql', import.meta.url);
const CALL_DATES = loadSql('./call-dates.sql', import.meta.url);

export const TRANSCRIPTS_SCHEMA_ID = 'proofline/sec-transcripts/v1';
export const FACT_TYPES = ['metric', 'guidance', 'strategy'] as const;
export const FACT_TOPICS = Object.keys(TOPIC_PATTERNS);
export const FACTS_MAX = 500;

export interface TranscriptQueryDeps {
  transcripts: SnapshotReader;
  registry?: SnapshotReader;
}

const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

/** A row with its JSON text columns parsed (what a packed record holds already). */
function parseColumns(r: Row, columns: readonly string[]): Row {
  const out: Row = withMembers(r);
  for (const c of columns) out[c] = json(r[c]);
  return out;
}
const TRANSCRIPT_JSON = [
  'speakers',
  'key_metrics',
  'topics',
  'notes',
  'source_origin',
  'fetch_origin',
  'origin',
  'markdown_origin',
] as const;

/**
 * The entry of `text` (a ticker, topic or filter text) in the transcripts packed store `name`
 * (jobs/transcripts/transcripts-packed.ts: a record is the list of entries whose texts share a text key):
 * `undefined` when the served snapshot has no such store (an older snapshot: the SQL path runs), `null` when the
 * text has no entry. One binary search and one positioned read, no DuckDB query.
 */
async function packedEntry<T>(reader: SnapshotReader, name: string, field: string, text: string): Promise<T | null | undefined> {
  const store = reader.packed(name);
  if (!store) return undefined;
  const v = await store.get(textKey(text));
  if (v === null) return null;
  return ((JSON.parse(v) as Array<Record<string, unknown>>).find((e) => e[field] === text) as T | undefined) ?? null;
}

/** Ticker and name through the registry when it knows the company; the ticker as given otherwise. */
async function resolve(d: TranscriptQueryDeps, raw: string): Promise<{ ticker: string; name: string | null }> {
  const ref = parseCompanyRef(raw);
  if (d.registry) {
    try {
      // Memoised per registry snapshot (the company routes share it): no DuckDB query once a company is known.
      const c = await findCompanyMemo(d.registry, raw);
      return { ticker: String(c.ticker), name: (c.name as string | null) ?? null };
    } catch (e) {
      if (!(e instanceof PipelineError) || !ref.ticker) throw e;
    }
  }
  if (!ref.ticker)
    throw new NotFoundError(`no company with CIK '${ref.cik}'`, {
      response: { ticker: String(ref.cik), hint: 'transcripts are looked up by ticker' },
    });
  return { ticker: ref.ticker, name: null };
}

function checkFilters(type?: string, topic?: string): void {
  if (type && !(FACT_TYPES as readonly string[]).includes(type))
    throw new InvalidInputError(`invalid parameter 'type': one of ${FACT_TYPES.join(', ')}`, { response: { parameter: 'type' } });
  if (topic && !FACT_TOPICS.includes(topic))
    throw new InvalidInputError(`invalid parameter 'topic': one of ${FACT_TOPICS.join(', ')}`, { response: { parameter: 'topic' } });
}

/** `transcripts[].speakers` (spec 000: array of string): each speaker's name, in the order of the call. */
export function speakerNames(speakers: unknown): string[] {
  if (!Array.isArray(speakers)) return [];
  return speakers.map((s) =>
    typeof s === 'string' ? s : String((s as { name?: unknown; id?: unknown }).name ?? (s as { id?: unknown }).id ?? ''),
  );
}

/** `transcripts[].key_metrics` (spec 000: array of string): `metric: value` per figure stated on the call, e.g. `revenue: $33.7 billion`. */
export function keyMetricTexts(metrics: unknown): string[] {
  if (!Array.isArray(metrics)) return [];
  return metrics.map((m) => {
    if (typeof m === 'string') return m;
    const o = m as { metric?: unknown; value?: unknown };
    return o.value == null ? String(o.metric ?? '') : `${String(o.metric ?? '')}: ${String(o.value)}`;
  });
}

/**
 * GET /api/company/{ticker}/transcripts. 404 with a hint when the ticker has none. The transcripts page
 * (platform/pagination.ts): `limit` a page, newest call first (default 200, max 500, so a company's whole index is
 * still one page by default); `transcript_count` counts them all, and `call_dates` and `origin` are the same on
 * every page.
 */
export async function getCompanyTranscripts(d: TranscriptQueryDeps, raw: string, q: { limit?: number; cursor?: string } = {}) {
  const t = await resolve(d, raw);
  const { limit, clamped } = clampLimit(q.limit, 200, 500);
  const snapshotId = d.transcripts.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(q.cursor, snapshotId);
  // The packed record (transcripts_company) holds the rows of both queries, JSON columns parsed.
  const packed = await packedEntry<{ transcripts: Row[]; call_dates: Row[] }>(d.transcripts, 'transcripts_company', 'ticker', t.ticker);
  const all =
    packed !== undefined
      ? (packed?.transcripts ?? [])
      : (await d.transcripts.query(BY_TICKER, { ticker: t.ticker })).map((r) => parseColumns(r, TRANSCRIPT_JSON));
  const rows = all.slice(offset, offset + limit);
  if (all.length === 0)
    throw new NotFoundError(`no transcripts for '${t.ticker}'`, {
      response: { ticker: t.ticker, hint: 'transcripts cover the calls ingested from PDF, EarningsCall, Motley-Fool or markdown files' },
    });
  const callDates = packed ? packed.call_dates : await d.transcripts.query(CALL_DATES, { ticker: t.ticker });
  return {
    schema: TRANSCRIPTS_SCHEMA_ID,
    ticker: t.ticker,
    name: t.name,
    transcript_count: all.length,
    transcripts: rows.map((r: Row) => ({
      transcript_key: r.transcript_key,
      title: r.title,
      fiscal_quarter: r.fiscal_quarter,
      fiscal_year: r.fiscal_year,
      call_date: r.call_date,
      format: r.format,
      // Spec 000: speakers and key_metrics are arrays of strings; the parsed objects go beside them (*_detail).
      speakers: speakerNames(r.speakers),
      speakers_detail: r.speakers ?? [],
      qa_present: r.qa_present,
      qa_questions: r.qa_questions,
      key_metrics: keyMetricTexts(r.key_metrics),
      key_metrics_detail: r.key_metrics ?? [],
      word_count: r.word_count,
      topics: r.topics,
      notes: r.notes,
      origin: r.origin,
      markdown_origin: r.markdown_origin,
      source_origin: r.source_origin,
      fetch_origin: r.fetch_origin,
    })),
    call_dates: callDates,
    origin: all[0]!.origin,
    ...(clamped ? { limit_clamped: clamped } : {}),
    next_cursor: nextCursorOf(offset, rows.length, all.length, snapshotId),
  };
}

/**
 * GET /api/company/{ticker}/facts?type=&topic=: `limit` facts a page (default 100), newest call first
 * (platform/pagination.ts); `fact_count` is the page's, `total` every matching fact's.
 */
export async function getCompanyFacts(
  d: TranscriptQueryDeps,
  raw: string,
  q: { type?: string; topic?: string; limit?: number; cursor?: string } = {},
) {
  checkFilters(q.type, q.topic);
  const t = await resolve(d, raw);
  const { limit, clamped } = clampLimit(q.limit, 100, FACTS_MAX);
  const snapshotId = d.transcripts.manifest?.snapshot_id ?? null;
  const offset = decodeCursor(q.cursor, snapshotId);
  const filter = { ticker: t.ticker, type: q.type ?? null, topic: q.topic ?? null };
  // The packed record (transcript_facts_company) holds every fact of the ticker in the SQL's order: filtered and
  // paged here, which keeps that order.
  const packed = d.transcripts.packed('transcripts_company')
    ? await packedEntry<{ facts: Row[] }>(d.transcripts, 'transcript_facts_company', 'ticker', t.ticker)
    : undefined;
  let rows: Row[];
  let total: number;
  if (packed !== undefined) {
    const matching = (packed?.facts ?? []).filter((r) => (!q.type || r.type === q.type) && (!q.topic || r.topic === q.topic));
    rows = matching.slice(offset, offset + limit);
    total = matching.length;
  } else {
    const [page, count] = await Promise.all([
      d.transcripts.query(FACTS, withMembers(filter, { limit, offset })),
      d.transcripts.query(FACTS_COUNT, filter),
    ]);
    rows = page.map((r) => parseColumns(r, ['origin']));
    total = Number(count[0]?.n ?? 0);
  }
  const hasTranscripts = async () =>
    packed !== undefined
      ? (await packedEntry(d.transcripts, 'transcripts_company', 'ticker', t.ticker)) !== null
      : (await d.transcripts.query(BY_TICKER, { ticker: t.ticker })).length > 0;
  // Spec 000: facts of an unknown company are a 404. A ticker the registry does not know is known here only when
  // it has transcripts (ETFs and non-registrants can); a registry company without transcripts answers 200, empty.
  if (total === 0 && t.name === null && !(await hasTranscripts()))
    throw new NotFoundError(`no company or transcripts for '${t.ticker}'`, {
      response: { ticker: t.ticker, hint: 'search by name at /api/search?q=...' },
    });
  return {
    schema: TRANSCRIPTS_SCHEMA_ID,
    ticker: t.ticker,
    name: t.name,
    filters: { type: q.type ?? null, topic: q.topic ?? null },
    fact_count: rows.length,
    total,
    ...(clamped ? { limit_clamped: clamped } : {}),
    facts: rows,
    next_cursor: nextCursorOf(offset, rows.length, total, snapshotId),
  };
}

/** Rows a block of the transcript_search_facts store holds (jobs/transcripts/packed-search-facts.sql). */
const SEARCH_FACTS_BLOCK = 500;

/**
 * One page of the cross-company facts of a filter from the packed blocks (at most two records), with the filter's
 * total; null when the served snapshot has no such store (the SQL path runs).
 */
async function packedSearchFacts(
  reader: SnapshotReader,
  filter: { topic: string | null; type: string | null },
  offset: number,
  limit: number,
): Promise<[Row[], number] | null> {
  if (!reader.packed('transcript_search_facts')) return null;
  const prefix = `${filter.topic ?? ''}|${filter.type ?? ''}|`;
  const block = (b: number) =>
    packedEntry<{ total: number; rows: Row[] }>(reader, 'transcript_search_facts', 'key', `${prefix}${b}`).then((e) => e ?? null);
  const first = Math.floor(offset / SEARCH_FACTS_BLOCK);
  const last = Math.floor((offset + Math.max(limit, 1) - 1) / SEARCH_FACTS_BLOCK);
  const rows: Row[] = [];
  let total: number | null = null;
  for (let b = first; b <= last; b++) {
    const e = await block(b);
    if (!e) break;
    total = e.total;
    rows.push(...e.rows);
  }
  // Past the last block (or a filter nothing matches): the total is block 0's, or 0 without one.
  total ??= (await block(0))?.total ?? 0;
  const from = offset - first * SEARCH_FACTS_BLOCK;
  return [rows.slice(from, from + limit), total];
}

/** The lists of a transcript search (`category`): topic-company rows, and facts (none with first=true). */
export const TRANSCRIPT_SEARCH_CATEGORIES = ['companies', 'facts'] as const;

/**
 * GET /api/search/transcripts?topic=&type=&first=true. Without `first`: matching facts across companies
 * plus per-topic company lists; with `first=true`: the first-mention date per company and topic.
 *
 * Two lists page (platform/pagination.ts), `limit` rows each a page (max 500; without it, facts 50 and companies all): `companies`, one row per
 * topic and company (topic, first mention, ticker), shown grouped under `topics` (`company_count` counts the topic's
 * companies over every page), and `facts` (newest call first; absent with first=true). `next` walks both lists at
 * once; `category=companies|facts` pages one of them alone (the other is then empty: `topics` [] or no `facts`).
 */
export async function searchTranscripts(
  d: TranscriptQueryDeps,
  q: { topic?: string; type?: string; first?: boolean; limit?: number; cursor?: string; category?: 'companies' | 'facts' },
) {
  checkFilters(q.type, q.topic);
  if (q.category === 'facts' && q.first)
    throw new InvalidInputError("invalid parameter 'category': first=true has no facts list", { response: { parameter: 'category' } });
  const { limit, clamped } = clampLimit(q.limit, 50, FACTS_MAX);
  const lists = q.category ? [q.category] : q.first ? ['companies'] : ['companies', 'facts'];
  const snapshotId = d.transcripts.manifest?.snapshot_id ?? null;
  const offsets = decodeOffsetsCursor(q.cursor, snapshotId, lists);
  const paged: Record<string, { offset: number; returned: number; total: number }> = {};
  const out: Record<string, unknown> = {
    schema: TRANSCRIPTS_SCHEMA_ID,
    query: { topic: q.topic ?? null, type: q.type ?? null, first: q.first ?? false },
    topics: [],
  };
  if (lists.includes('companies')) {
    // The packed record (transcript_search_topics, key '' for every topic) holds the rows, calls parsed.
    const packed = await packedEntry<{ rows: Row[] }>(d.transcripts, 'transcript_search_topics', 'key', q.topic ?? '');
    const all =
      packed !== undefined
        ? (packed?.rows ?? [])
        : (await d.transcripts.query(SEARCH_TOPICS, { topic: q.topic ?? null })).map((r) => parseColumns(r, ['calls']));
    const perTopic = new Map<string, number>();
    for (const r of all) perTopic.set(String(r.topic), (perTopic.get(String(r.topic)) ?? 0) + 1);
    const offset = offsets.companies!;
    // Without `limit` the companies list is whole, as before paging (spec 000 gives this route no limit); facts page at 50.
    const page = all.slice(offset, q.limit === undefined ? all.length : offset + limit);
    const byTopic = new Map<string, Array<Record<string, unknown>>>();
    for (const r of page) {
      const list = byTopic.get(String(r.topic)) ?? [];
      list.push(
        q.first
          ? { ticker: r.ticker, first_mention_date: r.first_mention_date, mentions: r.mentions }
          : { ticker: r.ticker, first_mention_date: r.first_mention_date, mentions: r.mentions, calls: r.calls },
      );
      byTopic.set(String(r.topic), list);
    }
    out.topics = [...byTopic].map(([topic, companies]) => ({ topic, company_count: perTopic.get(topic)!, companies }));
    out.company_total = all.length;
    paged.companies = { offset, returned: page.length, total: all.length };
  }
  if (lists.includes('facts')) {
    const filter = { topic: q.topic ?? null, type: q.type ?? null };
    const offset = offsets.facts!;
    const packed = await packedSearchFacts(d.transcripts, filter, offset, limit);
    const [facts, total] =
      packed ??
      (await Promise.all([
        d.transcripts
          .query(SEARCH_FACTS, withMembers(filter, { limit, offset }))
          .then((rows) => rows.map((r) => parseColumns(r, ['origin']))),
        d.transcripts.query(SEARCH_FACTS_COUNT, filter).then((count) => Number(count[0]?.n ?? 0)),
      ]));
    out.facts = facts;
    out.fact_total = total;
    paged.facts = { offset, returned: facts.length, total };
  }
  if (clamped) out.limit_clamped = clamped;
  out.next_cursor = nextOffsetsCursorOf(paged, snapshotId);
  return out as Record<string, unknown> & { next_cursor: string | null };
}
