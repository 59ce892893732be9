/**
 * The embedded query log's counters (service/platform/query-log.ts, issue 22): /api/stats counts AI-agent queries
 * from counts kept as rows arrive, and /api/ir/rankings reads the ranked rows' hourly counts (`query_log_ai_hourly`). Both must
 * equal the aggregate over `query_log` they replace, wherever the 24-hour window starts (to the millisecond), for
 * rows of this process (plain and hot-path encoded), rows handed over by another process, and rows pushed after a
 * count was asked. No timed assertion: counts are compared with the SQL.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/env.ts';
import {
  EncodedLogClient,
  EncodedLogRequest,
  QueryLog,
  type QueryLogEntry,
  RANKED_FILTER,
  toLine,
} from '../../service/platform/query-log.ts';
import { aiQueryCounts, rankCompanies } from '../../service/stats/stats.queries.ts';

const QUIET = { flushMs: 60_000, spoolMs: 60_000 };
const AGENTS = ['claudebot', 'gptbot', 'browser', 'perplexitybot', 'script', 'chatgpt_user'];
const TICKERS = ['ACME', 'BETA', null, 'GAMMA'];

/** The aggregate aiQueryCounts replaced, over the table after a flush. */
async function sqlCounts(log: QueryLog, nowMs: number) {
  const rows = await log.query('SELECT agent_type, count(*) AS n FROM query_log WHERE ts_ms >= $since GROUP BY agent_type', {
    since: Math.trunc(nowMs - 24 * 3600_000),
  });
  return Object.fromEntries(rows.map((r) => [String(r.agent_type), Number(r.n)]).sort(([a], [b]) => String(a).localeCompare(String(b))));
}
const sorted = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

const AI = ['claudebot', 'claude_user', 'chatgpt_user', 'gptbot', 'perplexitybot', 'google_extended', 'other_ai_agent'];
const PLATFORMS: Record<string, string> = {
  openai: `'chatgpt_user', 'gptbot'`,
  anthropic: `'claudebot', 'claude_user'`,
  perplexity: `'perplexitybot'`,
  google: `'google_extended'`,
  other_ai: `'other_ai_agent'`,
};
/** The ranking's every column, as the aggregate over the whole `query_log` has it (ticker, count, clients, last, platforms). */
async function rankingFromRows(log: QueryLog, until: number, days: number) {
  return (
    await log.query(
      `SELECT ticker, count(*)::INTEGER AS n, count(DISTINCT client)::INTEGER AS c, max(ts_ms) AS last,
         ${Object.entries(PLATFORMS)
           .map(([k, v]) => `count(*) FILTER (WHERE agent_type IN (${v}))::INTEGER AS ${k}`)
           .join(', ')}
       FROM query_log WHERE ts_ms >= $since AND ts_ms < $until AND ticker IS NOT NULL AND status = 200
         AND agent_type IN (${AI.map((a) => `'${a}'`).join(', ')})
       GROUP BY ticker ORDER BY n DESC, ticker`,
      { since: until - days * 86_400_000, until },
    )
  ).map((r) => [r.ticker, r.n, r.c, new Date(Number(r.last)).toISOString(), ...Object.keys(PLATFORMS).map((k) => r[k])]);
}
/** Every page of rankCompanies' ranking, walked with its cursor (the cursor pins the window's end), in the same columns. */
async function rankingWalked(log: QueryLog, until: number, days: number, pageSize = 5) {
  const out: unknown[][] = [];
  let cursor: string | undefined;
  do {
    const page = await rankCompanies(log, undefined, until, days, pageSize, cursor);
    for (const r of page.rankings)
      out.push([
        r.ticker,
        r.ai_queries,
        r.distinct_clients,
        r.last_queried_at,
        ...Object.keys(PLATFORMS).map((k) => r.by_platform[k as 'openai']),
      ]);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

/**
 * Steps of a kept-ranking walk over `log` (its `queryRanked` counted): each step ranks the window of `days` ending at
 * `until`, expects it to equal the aggregate over the rows and to have been grouped again or not, and returns its
 * tickers in rank order (`u0` names the step in messages).
 */
function rankingSteps(log: QueryLog, days: number, u0: number, defaultPageSize: number) {
  let queries = 0;
  const real = log.queryRanked.bind(log);
  log.queryRanked = (sql, params) => {
    queries++;
    return real(sql, params);
  };
  const step = async (until: number, grouped: boolean, pageSize = defaultPageSize) => {
    const at = `u0${until - u0 >= 0 ? '+' : ''}${until - u0}`;
    const before = queries;
    const got = await rankingWalked(log, until, days, pageSize);
    expect(got, `until ${at}`).toEqual(await rankingFromRows(log, until, days));
    expect(queries > before, `grouped again at ${at}`).toBe(grouped);
    return got.map((r) => r[0]);
  };
  return { step, queries: () => queries };
}

describe('query log counters (embedded DuckDB)', () => {
  let dir: string;
  let file: string;
  let log: QueryLog;
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_123; // a fixed instant inside the current minute
  const start = now - 24 * 3600_000; // the window's first millisecond
  let seq = 0;
  const entry = (ts: number, over: Partial<QueryLogEntry> = {}): QueryLogEntry => {
    const i = seq++;
    return {
      ts_ms: ts,
      client: `key:k${i % 3}`,
      tier: 'free',
      agent_type: AGENTS[i % AGENTS.length]!,
      method: 'GET',
      path: '/api/company/X',
      ticker: TICKERS[i % TICKERS.length]!,
      status: i % 5 === 4 ? 404 : 200,
      duration_ms: 1.5,
      ...over,
    };
  };

  beforeAll(async () => {
    dir = await tempDir('proofline-qlog-counters-');
    file = path.join(dir, 'query-log.duckdb');
    log = await QueryLog.open(file, QUIET);
  });
  afterAll(async () => {
    await log?.close().catch(() => undefined);
    await removeDir(dir);
  });

  it('counts as the aggregate does wherever the window starts, for rows pushed before and after a count', async () => {
    // Rows around the window's first minute (to the millisecond), through the day, and before the window.
    for (const d of [-90_000, -60_001, -1, 0, 1, 2, 59_000, 59_876, 60_000, 3_600_000, 12 * 3_600_000, 24 * 3_600_000 - 5])
      for (let k = 0; k < 3; k++) log.push(entry(start + d));
    const counted = await aiQueryCounts(log, now, 24);
    expect(await log.agentCounts(start)).not.toBeNull(); // the counters answer, not the table
    expect(sorted(counted.by_agent_type)).toEqual(await sqlCounts(log, now));
    // The window moves through the first minute millisecond by millisecond.
    for (const shift of [1, 2, 3, 59_000, 59_877, 60_000, 61_000])
      expect(sorted((await aiQueryCounts(log, now + shift, 24)).by_agent_type)).toEqual(await sqlCounts(log, now + shift));
    // A row pushed into the minute already read to the millisecond, and the hot path's encoded rows, count at once.
    log.push(entry(start + 5, { agent_type: 'claudebot' }));
    const client = new EncodedLogClient('key:hot', 'pro', 'gptbot', 'GET');
    const request = new EncodedLogRequest('/api/company/ACME', 'ACME', 200);
    for (let k = 0; k < 4; k++) log.pushEncoded(now - 1000 * k, client, request, 0.4);
    log.pushEncoded(start + 7, client, request, 0.4);
    const after = await aiQueryCounts(log, now, 24);
    expect(after.by_agent_type.claudebot).toBe(counted.by_agent_type.claudebot! + 1);
    expect(after.by_agent_type.gptbot).toBe(counted.by_agent_type.gptbot! + 5);
    expect(sorted(after.by_agent_type)).toEqual(await sqlCounts(log, now));
  });

  it("counts another process's handed-over rows once the owner is asked", async () => {
    const lines = [entry(now - 10, { agent_type: 'perplexitybot' }), entry(start + 3, { agent_type: 'perplexitybot' })].map(toLine);
    // A closed spool file of another process (pid 1, never this one), as a fallback log hands it over.
    await writeFile(path.join(`${file}.spool`, `${Date.now()}-1-000000.ndjson`), lines.join(''));
    const before = (await sqlCounts(log, now)).perplexitybot ?? 0; // this flushes: the file is loaded and counted
    expect(before).toBeGreaterThanOrEqual(2);
    const lines2 = [entry(now - 20, { agent_type: 'perplexitybot' })].map(toLine);
    await writeFile(path.join(`${file}.spool`, `${Date.now()}-1-000001.ndjson`), lines2.join(''));
    const counted = await aiQueryCounts(log, now, 24);
    expect(counted.by_agent_type.perplexitybot).toBe(before + 1);
    expect(sorted(counted.by_agent_type)).toEqual(await sqlCounts(log, now));
  });

  it('ranks nothing from a log without ranked rows, and the first ranked row as soon as it is pushed', async () => {
    const other = await QueryLog.open(path.join(dir, 'empty.duckdb'), QUIET);
    try {
      other.push(entry(now - 5, { agent_type: 'browser', ticker: 'ACME', status: 200 })); // not an AI agent: not ranked
      expect((await rankCompanies(other, undefined, now, 30, 10)).rankings).toEqual([]);
      other.push(entry(now - 4, { agent_type: 'gptbot', ticker: 'ACME', status: 200, client: 'key:z' }));
      const r = (await rankCompanies(other, undefined, now, 30, 10)).rankings;
      expect(r.map((x) => [x.ticker, x.ai_queries, x.by_platform.openai])).toEqual([['ACME', 1, 1]]);
    } finally {
      await other.close();
    }
  });

  it('ranks from whole-hour counts plus the rows of the partial hours as from the whole log, every column, any window', async () => {
    const f = path.join(dir, 'hourly', 'query-log.duckdb');
    let hourly = await QueryLog.open(f, QUIET);
    // 40 days of rows, loaded in 8 batches (an hour's key gets rows from several loads); AI agents and others, 200s and
    // 404s, tickers and none. A fixed pseudo-random sequence: the same rows every run.
    let x = 12345;
    const rnd = (n: number) => {
      // xorshift32: every bit usable (an LCG's low bits repeat, which bunched the timestamps).
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    const end = now - 17_777; // not on an hour
    for (let batch = 0; batch < 8; batch++) {
      for (let i = 0; i < 3000; i++)
        hourly.push({
          ts_ms: end - rnd(40 * 86_400) * 1000 - rnd(1000),
          client: `key:c${rnd(5)}`,
          tier: 'pro',
          agent_type: rnd(6) === 0 ? 'browser' : AI[rnd(AI.length)]!,
          method: 'GET',
          path: '/api/company/X',
          ticker: rnd(10) === 0 ? null : `T${rnd(12)}`,
          status: rnd(8) === 0 ? 404 : 200,
          duration_ms: 1,
        });
      await hourly.flush();
    }
    const hour = Math.floor(end / 3_600_000) * 3_600_000;
    const windows: Array<[number, number]> = [
      [end, 30],
      [end, 1],
      [end, 7],
      [hour, 30], // the window ends on an hour's first millisecond
      [hour - 1, 30], // and on an hour's last
      [hour + 3_599_999, 2],
      [end - 1_234_567, 39],
      [end - 20 * 86_400_000 + 1, 1],
    ];
    for (const [until, days] of windows) {
      const want = await rankingFromRows(hourly, until, days);
      expect(want.length, `${until} ${days}`).toBeGreaterThan(0);
      expect(await rankingWalked(hourly, until, days), `${until} ${days}`).toEqual(want);
    }
    // The counts are fewer rows than the ranked rows they count (5 clients x 12 tickers x 7 agents an hour at most).
    const [sizes] = await hourly.query(
      `SELECT (SELECT count(*) FROM query_log WHERE ${RANKED_FILTER})::INTEGER AS ranked, (SELECT count(*) FROM query_log_ai_hourly)::INTEGER AS counted,
         (SELECT sum(n) FROM query_log_ai_hourly)::INTEGER AS summed`,
    );
    expect(sizes!.summed).toBe(sizes!.ranked);
    expect(Number(sizes!.counted)).toBeLessThan(Number(sizes!.ranked));
    // Counts that do not add up to the ranked rows (a log written before they existed) are rebuilt at open.
    await hourly.close();
    const db = await DuckDBInstance.create(f);
    const c = await db.connect();
    await c.run(`DELETE FROM query_log_ai_hourly WHERE ticker = 'T3'`);
    c.closeSync();
    db.closeSync();
    hourly = await QueryLog.open(f, QUIET);
    try {
      expect(await rankingWalked(hourly, end, 30)).toEqual(await rankingFromRows(hourly, end, 30));
    } finally {
      await hourly.close();
    }
  });

  it('keeps a ranking only while later windows hold the same ranked rows: each bound, new rows and cursor pages', async () => {
    const kept = await QueryLog.open(path.join(dir, 'kept', 'query-log.duckdb'), QUIET);
    try {
      const days = 7;
      const u0 = now - 40_000; // the first window's end; s0 its start
      const s0 = u0 - days * 86_400_000;
      const ranked = (over: Partial<QueryLogEntry>) =>
        entry(0, { agent_type: 'claudebot', status: 200, client: 'key:q', tier: 'pro', ...over });
      // Rows all through the window, and one ranked row beside each of its bounds, each of a ticker of its own
      // so that counting it or not changes the ranking: 3 ms before the start, 5 ms after it, 10 ms after the end.
      for (let i = 0; i < 600; i++)
        kept.push(
          ranked({ ts_ms: s0 + 60_000 + i * 997_003, ticker: `T${i % 9}`, client: `key:c${i % 4}`, agent_type: AI[i % AI.length]! }),
        );
      kept.push(ranked({ ts_ms: s0 - 3, ticker: 'BEFORE' }));
      kept.push(ranked({ ts_ms: s0 + 5, ticker: 'EDGE' }));
      kept.push(ranked({ ts_ms: u0 + 10, ticker: 'LATE' }));
      await kept.flush();
      const { step, queries } = rankingSteps(kept, days, u0, 50);
      // A window is [since, until): a row on the start's millisecond is in it, one on the end's is not.
      expect(await step(u0, true)).toContain('EDGE');
      await step(u0 + 4, false); // the start moved up towards EDGE (5 ms in), the end short of LATE: the same rows
      expect(await step(u0 + 5, false)).toContain('EDGE'); // the start on EDGE's millisecond: EDGE still in
      expect(await step(u0 + 6, true)).not.toContain('EDGE'); // EDGE left the window
      expect(await step(u0 + 10, false)).not.toContain('LATE'); // the end on LATE's millisecond: LATE not yet in
      expect(await step(u0 + 11, true)).toContain('LATE'); // LATE entered it
      await step(u0 + 10, true); // back before LATE
      expect(await step(u0 - 2, true)).not.toContain('BEFORE'); // back over EDGE, short of BEFORE
      expect(await step(u0 - 3, true)).toContain('BEFORE'); // the start on BEFORE's millisecond
      await step(u0 - 3, false);
      await step(u0 + 12, true); // LATE in again
      await step(u0 + 11, false); // the end 1 ms after LATE: LATE still in
      // A ranked row added to the log: grouped again, and counted.
      kept.push(ranked({ ts_ms: u0 - 2_000, ticker: 'NEW' }));
      expect(await step(u0 - 2, true)).toContain('NEW');
      // A cursor walk of 2-row pages groups once, on its first page: the later pages are cut from the kept ranking.
      const first = queries();
      await step(u0 + 7, true, 2);
      expect(queries() - first).toBe(2); // the ranking and its bounds, once
    } finally {
      await kept.close();
    }
  });

  it('keeps a ranking exactly when the nearest ranked row to a bound is hours away, and unranked rows do not count', async () => {
    const far = await QueryLog.open(path.join(dir, 'far', 'query-log.duckdb'), QUIET);
    try {
      const H = 3_600_000;
      const days = 2;
      // The first window ends mid-hour, in an hour with no ranked row; so does its start.
      const u0 = Math.floor((now - 5 * H) / H) * H + 1_800_000;
      const s0 = u0 - days * 86_400_000;
      const ranked = (ts_ms: number, ticker: string) =>
        entry(0, { ts_ms, ticker, agent_type: 'claudebot', status: 200, client: 'key:far', tier: 'pro' });
      for (let i = 0; i < 40; i++) far.push(ranked(s0 + 6 * H + i * 3_700_000, `M${i % 5}`));
      far.push(ranked(s0 - 2 * H - 7, 'EARLY')); // two hours before the first start
      far.push(ranked(u0 + 2 * H + 11, 'LATER')); // two hours after the first end
      // Unranked rows right beside every bound: a 404, a browser, a request without a ticker.
      for (const t of [s0 - 1, s0 + 1, u0 - 1, u0 + 1]) {
        far.push(entry(t, { ticker: 'NOISE', status: 404, agent_type: 'claudebot' }));
        far.push(entry(t, { ticker: 'NOISE', status: 200, agent_type: 'browser' }));
        far.push(entry(t, { ticker: null, status: 200, agent_type: 'claudebot' }));
      }
      await far.flush();
      const { step } = rankingSteps(far, days, u0, 3);
      expect(await step(u0, true)).not.toContain('LATER');
      await step(u0 + 2 * H + 11, false); // the end moved two hours, onto LATER's millisecond: still the same rows
      expect(await step(u0 + 2 * H + 12, true)).toContain('LATER'); // LATER entered
      await step(u0 + H, true); // back before LATER
      await step(u0 - H, false); // the start moved back an hour, short of EARLY
      expect(await step(u0 - 2 * H - 7, true)).toContain('EARLY'); // the start on EARLY's millisecond
      await step(u0 - 2 * H - 7, false);
      expect(await step(u0 - 2 * H - 6, true)).not.toContain('EARLY'); // EARLY left the window
    } finally {
      await far.close();
    }
  });

  it('ranks from the ranked rows as from the whole log, also after they were lost and rebuilt', async () => {
    const rankedSql = async (days: number) =>
      (
        await log.query(
          `SELECT ticker, count(*)::INTEGER AS n, count(DISTINCT client)::INTEGER AS c, max(ts_ms) AS last FROM query_log
         WHERE ts_ms >= $since AND ts_ms < $until AND ticker IS NOT NULL AND status = 200
           AND agent_type IN ('claudebot', 'claude_user', 'chatgpt_user', 'gptbot', 'perplexitybot', 'google_extended', 'other_ai_agent')
         GROUP BY ticker ORDER BY n DESC, ticker`,
          { since: now - days * 86_400_000, until: now },
        )
      ).map((r) => [r.ticker, r.n, r.c, new Date(Number(r.last)).toISOString()]);
    const ranked = async (days: number) =>
      (await rankCompanies(log, undefined, now, days, 50)).rankings.map((r) => [
        r.ticker,
        r.ai_queries,
        r.distinct_clients,
        r.last_queried_at,
      ]);
    // A ranked row pushed just now is in the next ranking (the flush is skipped only when none is waiting).
    log.push(entry(now - 1, { agent_type: 'claudebot', ticker: 'ZETA', status: 200 }));
    const one = await ranked(1);
    expect(one.find((r) => r[0] === 'ZETA')).toBeTruthy();
    expect(one).toEqual(await rankedSql(1));
    expect(await ranked(30)).toEqual(await rankedSql(30));
    // A log written before 2026-11-27 (a copy of the ranked rows in query_log_ai, hourly counts without first_ms, some
    // of them missing): the copy is dropped and the counts rebuilt at open.
    await log.close();
    const db = await DuckDBInstance.create(file);
    const c = await db.connect();
    await c.run(`CREATE TABLE query_log_ai AS SELECT ts_ms, client, agent_type, ticker, status FROM query_log WHERE ${RANKED_FILTER}`);
    await c.run(`ALTER TABLE query_log_ai_hourly DROP COLUMN first_ms`);
    await c.run(`DELETE FROM query_log_ai_hourly WHERE ticker = 'ACME'`);
    c.closeSync();
    db.closeSync();
    log = await QueryLog.open(file, QUIET);
    const [tables] = await log.query(
      `SELECT count(*) FILTER (WHERE table_name = 'query_log_ai')::INTEGER AS copies,
         count(*) FILTER (WHERE table_name = 'query_log_ai_hourly')::INTEGER AS hourly FROM duckdb_tables()`,
    );
    expect(tables).toEqual({ copies: 0, hourly: 1 });
    // Each hour's first and last ranked row, as the kept ranking's bounds read them, are the rows' own.
    const hoursOf = (sql: string) => log.query(`${sql} ORDER BY hour`);
    expect(await hoursOf('SELECT hour, min(first_ms) AS first_ms, max(last_ms) AS last_ms FROM query_log_ai_hours GROUP BY hour')).toEqual(
      await hoursOf(
        `SELECT ts_ms // 3600000 AS hour, min(ts_ms) AS first_ms, max(ts_ms) AS last_ms FROM query_log WHERE ${RANKED_FILTER} GROUP BY hour`,
      ),
    );
    expect(await ranked(30)).toEqual(await rankedSql(30));
    expect(sorted((await aiQueryCounts(log, now, 24)).by_agent_type)).toEqual(await sqlCounts(log, now));
  });
});
