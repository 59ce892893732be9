/**
 * Registry totals, AI-agent query counts and company rankings by AI-agent
 * query volume, transport-free. Totals come from the registry snapshot
 * (tables checked first: people, products and partnerships appear as the
 * registry layers are published) and are cached per snapshot id; query
 * counts come from the query log (service/platform/query-log.ts).
 */
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { AGENT_PLATFORM, AI_AGENT_TYPES } from '../platform/agent-type.ts';
import { RANKED_FILTER, type QueryLogBuffer } from '../platform/query-log.ts';
import { decodeKeyCursor, encodeKeyCursor } from '../platform/pagination.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { snapshotSchema } from '../../lib/warehouse/snapshot-schema.ts';

const AI_LIST = AI_AGENT_TYPES.map((t) => `'${t}'`).join(', '); // constants from our own allow-list, not input

export interface RegistryTotals {
  companies: number;
  active_companies: number;
  people: number | null;
  products: number | null;
  partnerships: number | null;
  filings: number | null;
}

const totalsCache = new WeakMap<SnapshotReader, { snapshot: string; totals: Promise<RegistryTotals> }>();

async function countOf(reader: SnapshotReader, sql: string): Promise<number> {
  const rows = await reader.query(sql);
  return Number(rows[0]?.n ?? 0);
}

async function computeTotals(reader: SnapshotReader): Promise<RegistryTotals> {
  const schema = await snapshotSchema(reader);
  const has = (t: string, ...cols: string[]) => !!schema.get(t) && cols.every((c) => schema.get(t)!.has(c));
  const [companies, active, people, products, partnerships, filings] = await Promise.all([
    has('company_lookup', 'cik') ? countOf(reader, /* sql */ `SELECT count(DISTINCT cik) AS n FROM company_lookup`) : 0,
    has('company_lookup', 'cik', 'status')
      ? countOf(reader, /* sql */ `SELECT count(DISTINCT cik) AS n FROM company_lookup WHERE status = 'active'`)
      : 0,
    has('people', 'person_key') ? countOf(reader, /* sql */ `SELECT count(DISTINCT person_key) AS n FROM people`) : null,
    has('profile_facts', 'fact_type', 'value')
      ? countOf(reader, /* sql */ `SELECT count(DISTINCT (cik, lower(value))) AS n FROM profile_facts WHERE fact_type LIKE 'product%'`)
      : null,
    has('profile_facts', 'fact_type', 'value')
      ? countOf(reader, /* sql */ `SELECT count(DISTINCT (cik, lower(value))) AS n FROM profile_facts WHERE fact_type LIKE 'partner%'`)
      : null,
    has('filings', 'accession') ? countOf(reader, /* sql */ `SELECT count(*) AS n FROM filings`) : null,
  ]);
  return { companies, active_companies: active, people, products, partnerships, filings };
}

/** Totals of the registry snapshot being served, computed once per snapshot. */
export function registryTotals(reader: SnapshotReader): Promise<RegistryTotals> {
  const id = reader.manifest?.snapshot_id ?? '';
  const c = totalsCache.get(reader);
  if (c && c.snapshot === id) return c.totals;
  const totals = computeTotals(reader);
  totalsCache.set(reader, { snapshot: id, totals });
  totals.catch(() => totalsCache.delete(reader));
  return totals;
}

/** AI-agent query counts in the `hours` before `nowMs`, by platform and by agent type. */
export async function aiQueryCounts(log: QueryLogBuffer, nowMs: number, hours = 24) {
  const since = Math.trunc(nowMs - hours * 3600_000);
  // The embedded log keeps these counts as rows arrive (query-log.ts QueryLog); otherwise, or before its counters
  // reach back to `since`, the log is aggregated. Same counts either way (test/api/query-log-counters.test.ts).
  const counted = await log.agentCounts(since);
  const rows = counted
    ? [...counted].map(([agent_type, n]) => ({ agent_type, n }))
    : await log.query(/* sql */ `SELECT agent_type, count(*) AS n FROM query_log WHERE ts_ms >= $since GROUP BY agent_type`, { since });
  const by_platform: Record<string, number> = { openai: 0, anthropic: 0, perplexity: 0, google: 0, other_ai: 0 };
  const by_agent_type: Record<string, number> = {};
  let total_ai = 0;
  let total_requests = 0;
  for (const r of rows) {
    const t = String(r.agent_type);
    const n = Number(r.n);
    by_agent_type[t] = n;
    total_requests += n;
    const p = AGENT_PLATFORM[t as keyof typeof AGENT_PLATFORM];
    if (p) {
      by_platform[p] = (by_platform[p] ?? 0) + n;
      total_ai += n;
    }
  }
  return { window_hours: hours, total_requests, total_ai, by_platform, by_agent_type };
}

/**
 * The whole hours (`hour` = ts_ms // 3,600,000) of the window [since, until): from the first that starts at or after
 * `since` to the last that ends at or before `until` (`first_hour` ≤ hour < `end_hour`), and the milliseconds they
 * span ([`first_ms`, `end_ms`)); none when the window holds no whole hour (`end_hour` ≤ `first_hour`: every row is
 * then read from the rows themselves).
 */
function wholeHours<T extends { since: number; until: number }>(w: T) {
  const first_hour = Math.ceil(w.since / 3_600_000);
  const end_hour = Math.max(first_hour, Math.floor(w.until / 3_600_000));
  return { ...w, first_hour, end_hour, first_ms: first_hour * 3_600_000, end_ms: end_hour * 3_600_000 };
}

/** Company names by ticker, per registry snapshot: the tickers looked up so far (bounded; a new snapshot starts over). */
const nameCache = new WeakMap<SnapshotReader, { snapshot: string; names: Map<string, string | null> }>();
const NAME_CACHE_MAX = 50_000;

/**
 * The names of `tickers` in the served registry snapshot (null for a ticker it does not list), as
 * `company_lookup` has them. Looked up once per snapshot and ticker: a ranking page named its 50 tickers with a
 * query per request (3.5–6 ms). A failed lookup leaves the names null and is not kept.
 */
async function companyNames(registry: SnapshotReader, tickers: string[]): Promise<Map<string, string | null>> {
  const snapshot = registry.manifest?.snapshot_id ?? '';
  let cache = nameCache.get(registry);
  if (!cache || cache.snapshot !== snapshot) nameCache.set(registry, (cache = { snapshot, names: new Map() }));
  const missing = tickers.filter((t) => !cache.names.has(t));
  if (missing.length) {
    const found = await registry
      .query(/* sql */ `SELECT ticker, name FROM company_lookup WHERE ticker IN (SELECT unnest(string_split($tickers, ',')))`, {
        tickers: missing.join(','),
      })
      .then(
        (rows) => rows,
        () => null,
      );
    if (!found) return new Map();
    const fresh = new Map<string, string | null>(missing.map((t) => [t, null]));
    for (const f of found) fresh.set(String(f.ticker), (f.name as string | null) ?? null);
    const out = new Map(tickers.map((t) => [t, fresh.has(t) ? fresh.get(t)! : (cache.names.get(t) ?? null)]));
    // Kept unless the snapshot changed while the query ran (these names are then this answer's only).
    if (registry.manifest?.snapshot_id === snapshot) {
      if (cache.names.size + fresh.size > NAME_CACHE_MAX) cache.names.clear();
      for (const [t, n] of fresh) cache.names.set(t, n);
    }
    return out;
  }
  return cache.names;
}

/** One ticker's group of a ranking, in the answer's types (built once per group, not per page that shows it). */
interface RankedGroup {
  ticker: string;
  ai_queries: number;
  distinct_clients: number;
  by_platform: { openai: number; anthropic: number; perplexity: number; google: number; other_ai: number };
  last_queried_at: string;
}
type RankedGroups = RankedGroup[];

/** The ranking query's rows (one per ticker, in rank order) as groups. */
function toGroups(rows: Awaited<ReturnType<QueryLogBuffer['queryRanked']>>): RankedGroups {
  return rows.map((r) => ({
    ticker: String(r.ticker),
    ai_queries: Number(r.ai_queries),
    distinct_clients: Number(r.distinct_clients),
    by_platform: {
      openai: Number(r.openai),
      anthropic: Number(r.anthropic),
      perplexity: Number(r.perplexity),
      google: Number(r.google),
      other_ai: Number(r.other_ai),
    },
    last_queried_at: new Date(Number(r.last_ms)).toISOString(),
  }));
}

/**
 * A window's whole ranking (every ticker, in rank order), kept while the ranked rows it counts are the ones any later
 * window of the same `days` counts: no row was added to the log since (`version`), and no row lies between the two
 * windows' starts or between their ends. A window is [since, until): `start_prev`/`start_next` are the last ranked
 * row before the kept window's start and the first at or after it, `end_prev`/`end_next` the same for its end
 * (±Infinity: none). Then a window [since, until) holds exactly the same rows iff start_prev < since ≤ start_next and
 * end_prev < until ≤ end_next, and its ranking is the kept one, every column and the order alike
 * (test/api/query-log-counters.test.ts checks both sides of each bound). Issue 22: every /api/ir/rankings request
 * grouped the window's rows again (5–10 ms over half a million ranked rows, one at a time on the log's one reader).
 */
interface KeptRanking {
  version: number;
  start_prev: number;
  start_next: number;
  end_prev: number;
  end_next: number;
  groups: RankedGroups;
}
/** Per log, per `days`: the last window ranked (a handful of `days` values at most are kept). */
const keptRankings = new WeakMap<QueryLogBuffer, Map<number, KeptRanking>>();
const KEPT_WINDOWS = 8;

const bound = (v: unknown, none: number) => (v === null || v === undefined ? none : Number(v));

/**
 * Companies ranked by successful AI-agent queries about them in the `days` days before `nowMs` (the window
 * [nowMs - days, nowMs)), one page: `limit` companies from `offset` (rank = offset + position). `next_cursor`
 * (platform/pagination.ts, a keyset cursor holding the window's end and the next offset) pins the window, so the
 * next page ranks the same queries even while new ones arrive: a walk gets every ranked company once. That holds
 * because a row's `ts_ms` is the time it was logged (QueryLogEntry.ts_ms) and the window ends before the first
 * page's own millisecond: every row of this process the window will ever hold was logged before the first page
 * read the log, and `syncRanked` loads it. Rows another process hands over (loaded once a second) or appends
 * to the PostgreSQL log reach the log later; a walk that overlaps their arrival may rank them on later pages.
 */
export async function rankCompanies(
  log: QueryLogBuffer,
  registry: SnapshotReader | undefined,
  nowMs: number,
  days: number,
  limit: number,
  cursor?: string,
) {
  const at = decodeKeyCursor(cursor, 3);
  if (at && (!/^\d{1,15}$/.test(at[0]!) || !/^\d{1,9}$/.test(at[1]!) || at[2] !== String(days)))
    throw new InvalidInputError("'cursor' is not a cursor of this list (or of another `days` window)", {
      response: { parameter: 'cursor' },
    });
  const until = at ? Number(at[0]) : Math.trunc(nowMs);
  const offset = at ? Number(at[1]) : 0;
  const since = Math.trunc(until - days * 86_400_000);
  const page = { since, until, limit: limit + 1, offset };
  // The per-platform columns, each a count of the rows whose agent type is the platform's (`count` writes it).
  const platforms = (count: (filter: string) => string) =>
    [
      [`agent_type IN ('chatgpt_user', 'gptbot')`, 'openai'],
      [`agent_type IN ('claudebot', 'claude_user')`, 'anthropic'],
      [`agent_type = 'perplexitybot'`, 'perplexity'],
      [`agent_type = 'google_extended'`, 'google'],
      [`agent_type = 'other_ai_agent'`, 'other_ai'],
    ]
      .map(([filter, name]) => `${count(filter!)} AS ${name}`)
      .join(', ');
  // The ranked rows are RANKED_FILTER's rows of query_log; the embedded log also counts them per hour (`hourly`).
  const hourly = log.rankedHourlyTable;
  let found: RankedGroups;
  await log.syncRanked();
  const version = log.rankedVersion;
  const kept = version === null ? undefined : keptRankings.get(log)?.get(days);
  if (
    kept &&
    kept.version === version &&
    kept.start_prev < since &&
    since <= kept.start_next &&
    kept.end_prev < until &&
    until <= kept.end_next
  ) {
    found = kept.groups.slice(offset, offset + limit + 1);
  } else if (hourly && version !== null) {
    // The window's whole hours from their counts, its partial first and last hours from the rows: the same
    // groups as the query below over the rows alone (test/api/query-log-counters.test.ts compares them). Each
    // partial hour is a range of its own: a range per scan lets DuckDB skip the row groups outside it (the rows
    // are appended in time order), where one scan with an OR of the two read every ranked row. The rows of the
    // partial hours are query_log's with status 200; the WHERE over `parts` keeps the rest of RANKED_FILTER (a ticker,
    // an AI agent type). Every ticker is ranked (no LIMIT), so the ranking is kept for the next requests (`KeptRanking`).
    const groups = toGroups(
      await log.queryRanked(
        /* sql */ `WITH parts AS (
         SELECT ticker, client, agent_type, n, last_ms FROM ${hourly} WHERE hour >= $first_hour AND hour < $end_hour
         UNION ALL
         SELECT ticker, client, agent_type, 1 AS n, ts_ms AS last_ms FROM query_log WHERE ts_ms >= $since AND ts_ms < $first_ms AND status = 200
         UNION ALL
         SELECT ticker, client, agent_type, 1 AS n, ts_ms AS last_ms FROM query_log WHERE ts_ms >= $end_ms AND ts_ms < $until AND status = 200
       )
       SELECT ticker, sum(n) AS ai_queries, count(DISTINCT client) AS distinct_clients,
         ${platforms((f) => `coalesce(sum(n) FILTER (WHERE ${f}), 0)`)},
         max(last_ms) AS last_ms
       FROM parts WHERE ticker IS NOT NULL AND agent_type IN (${AI_LIST})
       GROUP BY ticker ORDER BY ai_queries DESC, ticker`,
        wholeHours({ since, until }),
      ),
    );
    // The last ranked row before each bound and the first at or after it: from the rows of the bound's own hour,
    // else from the first and last ranked row of the hours before or after it (`rankedHoursTable`, a few rows an
    // hour), so that every scan of query_log is one hour's range (its row groups outside it skipped) however long
    // the log is.
    const hours = log.rankedHoursTable ?? hourly;
    const edge = (t: number) => ({ h: Math.floor(t / 3_600_000), from: Math.floor(t / 3_600_000) * 3_600_000 });
    const s = edge(since);
    const u = edge(until);
    const prev = (t: string, x: string) =>
      `coalesce((SELECT max(ts_ms) FROM query_log WHERE ts_ms >= $${x}_from AND ts_ms < $${t} AND ${RANKED_FILTER}),
                (SELECT max(last_ms) FROM ${hours} WHERE hour < $${x}_h))`;
    const next = (t: string, x: string) =>
      `coalesce((SELECT min(ts_ms) FROM query_log WHERE ts_ms >= $${t} AND ts_ms < $${x}_to AND ${RANKED_FILTER}),
                (SELECT min(first_ms) FROM ${hours} WHERE hour > $${x}_h))`;
    const [b] = await log.queryRanked(
      /* sql */ `SELECT ${prev('since', 's')} AS start_prev, ${next('since', 's')} AS start_next,
         ${prev('until', 'u')} AS end_prev, ${next('until', 'u')} AS end_next`,
      {
        since,
        until,
        s_h: s.h,
        s_from: s.from,
        s_to: s.from + 3_600_000,
        u_h: u.h,
        u_from: u.from,
        u_to: u.from + 3_600_000,
      },
    );
    // Kept only when no load added rows while the two queries ran (they may have read either side of it).
    if (log.rankedVersion === version) {
      let byDays = keptRankings.get(log);
      if (!byDays) keptRankings.set(log, (byDays = new Map()));
      if (!byDays.has(days) && byDays.size >= KEPT_WINDOWS) byDays.delete(byDays.keys().next().value!);
      byDays.set(days, {
        version,
        start_prev: bound(b?.start_prev, Number.NEGATIVE_INFINITY),
        start_next: bound(b?.start_next, Number.POSITIVE_INFINITY),
        end_prev: bound(b?.end_prev, Number.NEGATIVE_INFINITY),
        end_next: bound(b?.end_next, Number.POSITIVE_INFINITY),
        groups,
      });
    }
    found = groups.slice(offset, offset + limit + 1);
  } else {
    found = toGroups(
      await log.queryRanked(
        /* sql */ `SELECT ticker, count(*) AS ai_queries, count(DISTINCT client) AS distinct_clients,
       ${platforms((f) => `count(*) FILTER (WHERE ${f})`)},
       max(ts_ms) AS last_ms
     FROM query_log
     WHERE ts_ms >= $since AND ts_ms < $until AND ticker IS NOT NULL AND status = 200 AND agent_type IN (${AI_LIST})
     GROUP BY ticker ORDER BY ai_queries DESC, ticker LIMIT $limit OFFSET $offset`,
        page,
      ),
    );
  }
  const rows = found.slice(0, limit);
  const next_cursor = found.length > limit ? encodeKeyCursor([String(until), String(offset + limit), String(days)]) : null;
  const names =
    registry?.manifest && rows.length
      ? await companyNames(
          registry,
          rows.map((g) => g.ticker),
        )
      : new Map();
  // A page's entry: its rank and name, then the group's columns (their order is the answer's).
  const rankings = rows.map((g, i) => ({
    rank: offset + i + 1,
    ticker: g.ticker,
    name: names.get(g.ticker) ?? null,
    ai_queries: g.ai_queries,
    distinct_clients: g.distinct_clients,
    by_platform: g.by_platform,
    last_queried_at: g.last_queried_at,
  }));
  return { rankings, next_cursor };
}
