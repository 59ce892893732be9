/**
 * The query log across API processes, on both backends (issue 20):
 * - embedded DuckDB (one DATA_DIR): the process that owns the log file counts
 *   every process's requests (the others log to memory and hand each loaded
 *   spool file over), and it adopts the spool folder of a process that died
 *   before handing its files over;
 * - PostgreSQL (DATABASE_URL): every process appends to one table, so every
 *   process counts every process's requests; rankings and stats read it.
 * The PostgreSQL half skips with a notice without a server (helpers/postgres.ts).
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/shared.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { freshDatabase, HAS_POSTGRES } from '../helpers/postgres.ts';
import { QueryLog, type QueryLogBuffer, type QueryLogEntry } from '../../service/platform/query-log.ts';
import { PgQueryLog } from '../../service/platform/query-log.postgres.ts';
import { aiQueryCounts, rankCompanies } from '../../service/stats/stats.queries.ts';

const run = promisify(execFile);
const entry = (i: number, client = 'ip:owner'): QueryLogEntry => ({
  ts_ms: 1_795_000_000_000 + i,
  client,
  tier: 'free',
  agent_type: 'gptbot',
  method: 'GET',
  path: `/api/company/T${i}`,
  ticker: `T${i}`,
  status: 200,
  duration_ms: 1.5,
});
const COUNT = `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE client = 'ip:other')::INTEGER AS other FROM query_log`;
const QUIET = { flushMs: 60_000, spoolMs: 60_000 };

interface Backend {
  name: string;
  skip: boolean;
  /** A fresh log location (a DuckDB file path or a PostgreSQL URL) and its removal. */
  fresh(dir: string, name: string): Promise<{ target: string; drop: () => Promise<void> }>;
  /** How many rows a second process sees in its own log after the first flushed `mine` and it pushed `theirs`. */
  otherSees(mine: number, theirs: number): number;
}

const BACKENDS: Backend[] = [
  {
    name: 'embedded DuckDB',
    skip: false,
    fresh: async (dir, name) => ({ target: path.join(dir, name, 'state', 'query-log.duckdb'), drop: async () => undefined }),
    otherSees: (_mine, theirs) => theirs, // the file is the owner's: a second process logs to memory
  },
  {
    name: 'PostgreSQL',
    skip: !HAS_POSTGRES,
    fresh: async () => {
      const db = await freshDatabase();
      return { target: db.url, drop: db.drop };
    },
    otherSees: (mine, theirs) => mine + theirs, // one table for every node
  },
];

/** Opens the log at `target` the way UsageService does: a PostgreSQL URL, else a DuckDB file. */
function openLog(target: string): Promise<QueryLogBuffer> {
  return target.startsWith('postgres') ? PgQueryLog.open(target, QUIET) : QueryLog.open(target, QUIET);
}

/** A second process: opens the same log, pushes `n` rows, reports what its own log holds, closes. */
async function logFromAnotherProcess(dir: string, target: string, n: number): Promise<{ where: string; n: number; pid: number }> {
  const script = path.join(dir, 'other-process.mts');
  await writeFile(
    script,
    `import { QueryLog } from ${JSON.stringify(path.join(REPO_ROOT, 'service/platform/query-log.ts'))};
import { PgQueryLog } from ${JSON.stringify(path.join(REPO_ROOT, 'service/platform/query-log.postgres.ts'))};
const target = process.argv[2]!;
const opts = { flushMs: 60_000, spoolMs: 60_000 };
const q = target.startsWith('postgres') ? await PgQueryLog.open(target, opts) : await QueryLog.open(target, opts);
for (let i = 0; i < ${n}; i++) q.push({ ts_ms: 1_795_000_001_000 + i, client: 'ip:other', tier: 'free', agent_type: 'claudebot', method: 'GET', path: '/api/company/OTHER', ticker: 'OTHER', status: 200, duration_ms: 2 });
const [r] = await q.query('SELECT count(*)::INTEGER AS n FROM query_log');
await q.close();
console.log(JSON.stringify({ where: q.file, n: r!.n, pid: process.pid }));
`,
  );
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, target], { cwd: REPO_ROOT });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { where: string; n: number; pid: number };
}

describe.each(BACKENDS)('QueryLog across processes ($name)', (b) => {
  let dir: string;
  const drops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    dir = await tempDir('proofline-qlog-procs-');
  });
  afterAll(async () => {
    for (const d of drops) await d();
    await removeDir(dir);
  });

  it.skipIf(b.skip)(
    "counts the other process's rows in the first process's log, and the rows outlive both",
    async () => {
      const { target, drop } = await b.fresh(dir, 'a');
      drops.push(drop);
      const owner = await openLog(target);
      for (let i = 0; i < 4; i++) owner.push(entry(i));
      await owner.flush();
      const other = await logFromAnotherProcess(dir, target, 7);
      expect(other.n).toBe(b.otherSees(4, 7));
      expect(await owner.query(COUNT)).toEqual([{ n: 11, other: 7 }]);
      if (b.name === 'embedded DuckDB') {
        expect(other.where).toBe(':memory:');
        // Everything was handed over and loaded: no spool file and no fallback folder is left.
        expect(await readdir(path.dirname(target))).not.toContain(`query-log-spool-${other.pid}`);
        expect(await readdir(`${target}.spool`)).toEqual([]);
      }
      await owner.close();
      // The rows are stored: the next process to open the log sees them.
      const again = await openLog(target);
      expect(await again.query(COUNT)).toEqual([{ n: 11, other: 7 }]);
      await again.close();
    },
    60_000,
  );

  it.skipIf(b.skip)(
    "ranks companies and counts AI queries over every writer's rows",
    async () => {
      const { target, drop } = await b.fresh(dir, 'r');
      drops.push(drop);
      const first = await openLog(target);
      for (let i = 0; i < 3; i++) first.push({ ...entry(0), agent_type: 'claudebot', ticker: 'ACME' });
      first.push({ ...entry(1), agent_type: 'browser', ticker: 'ACME' }); // not an AI agent: not ranked
      first.push({ ...entry(2), ticker: 'BETA', status: 404 }); // not a success: not ranked
      await first.flush();
      await logFromAnotherProcess(dir, target, 2); // two claudebot rows about OTHER
      // On the embedded store the first process owns the file and loads the handed-over rows; on PostgreSQL it reads the table.
      const now = 1_795_000_010_000;
      const { rankings: ranked } = await rankCompanies(first, undefined, now, 30, 10);
      expect(ranked.map((r) => [r.ticker, r.ai_queries, r.by_platform.anthropic])).toEqual([
        ['ACME', 3, 3],
        ['OTHER', 2, 2],
      ]);
      expect(ranked[0]).toMatchObject({ rank: 1, distinct_clients: 1, last_queried_at: new Date(1_795_000_000_000).toISOString() });
      const counts = await aiQueryCounts(first, now, 24);
      expect(counts).toMatchObject({ total_requests: 7, total_ai: 6, by_platform: { anthropic: 5, openai: 1 } });
      await first.close();
    },
    60_000,
  );
});

describe('QueryLog on one DATA_DIR (embedded DuckDB): spool folders', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('proofline-qlog-spool-');
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  it('adopts the spool folder of a fallback process that died, and leaves a live one alone', async () => {
    const file = path.join(dir, 'b', 'state', 'query-log.duckdb');
    const { stdout } = await run(process.execPath, ['-e', 'console.log(process.pid)']);
    const deadPid = Number(stdout.trim());
    const dead = path.join(dir, 'b', 'state', `query-log-spool-${deadPid}`);
    const live = path.join(dir, 'b', 'state', `query-log-spool-${process.pid}`);
    await mkdir(dead, { recursive: true });
    await mkdir(live, { recursive: true });
    const lines = [0, 1, 2].map((i) => JSON.stringify(entry(i, 'ip:other'))).join('\n');
    await writeFile(path.join(dead, `0000000000001-${deadPid}-000000.ndjson.open`), `${lines}\n`);
    await writeFile(path.join(live, `0000000000002-${process.pid}-000000.ndjson`), `${lines}\n`);
    const owner = await QueryLog.open(file, QUIET);
    expect(await owner.query(COUNT)).toEqual([{ n: 3, other: 3 }]);
    const left = await readdir(path.dirname(file));
    expect(left).not.toContain(`query-log-spool-${deadPid}`);
    expect(left).toContain(`query-log-spool-${process.pid}`);
    await owner.close();
  }, 180_000);
});
