/**
 * The query log on PostgreSQL through an outage (issue 20, Faults): a
 * PostgreSQL server of this suite's own (helpers/postgres.ts startOwnCluster),
 * stopped and started with pg_ctl.
 *
 * - The log keeps the rows it could not write and sends them, oldest first,
 *   when the database is back; at most `maxUnsent` rows are held, beyond that
 *   the newest are dropped and counted (query-log.ts MAX_QUERY_LOG_BUFFER).
 * - Exactly once: a batch whose COMMIT went through but whose answer was lost
 *   (a proxy drops the connection right after PostgreSQL answers COMMIT) is
 *   sent again and skipped, never counted twice (migration 0006).
 * - Two real server processes keep answering warehouse reads (200) while the
 *   database is down, health says degraded and shows the rows each holds,
 *   stats answer 503 with Retry-After (never 500); once the database is back
 *   /api/stats on either counts every request made meanwhile exactly once.
 *
 * Skipped with a notice without PostgreSQL (never under REQUIRE_POSTGRES=1).
 */
import net from 'node:net';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceUnavailableError } from '../../lib/errors.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { PgQueryLog } from '../../service/platform/query-log.postgres.ts';
import type { QueryLogEntry } from '../../service/platform/query-log.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { HAS_POSTGRES, type OwnCluster, startOwnCluster } from '../helpers/postgres.ts';
import { exited, startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const QUIET = { flushMs: 60_000 };
const entry = (i: number): QueryLogEntry => ({
  ts_ms: 1_795_000_000_000 + i,
  client: 'ip:outage',
  tier: 'free',
  agent_type: 'gptbot',
  method: 'GET',
  path: `/api/company/T${i}`,
  ticker: `T${i}`,
  status: 200,
  duration_ms: 1,
});

/** The `i` of every row in the database whose client is `ip:outage`, ascending. */
async function storedIndexes(sql: postgres.Sql): Promise<number[]> {
  const rows = await sql`SELECT ts_ms FROM query_log WHERE client = 'ip:outage' ORDER BY ts_ms`;
  return rows.map((r) => Number(r.ts_ms) - 1_795_000_000_000);
}

/**
 * A TCP proxy in front of PostgreSQL that, once armed, drops the client's connection as soon as the server answers a
 * COMMIT (its CommandComplete tag `COMMIT\0`), without passing the answer on: the transaction is committed, and the
 * client cannot know.
 */
async function commitAnswerDropper(upstreamPort: number) {
  let armed = false;
  let dropped = 0;
  const tag = Buffer.from('COMMIT\0');
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (armed && d.includes(tag)) {
        armed = false;
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    arm: () => (armed = true),
    dropped: () => dropped,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const suite = HAS_POSTGRES ? describe : describe.skip;

suite('the query log on PostgreSQL through an outage', () => {
  let cluster: OwnCluster;
  let sql: postgres.Sql;
  beforeAll(async () => {
    cluster = await startOwnCluster();
    sql = postgres(cluster.url, { max: 1, onnotice: () => undefined });
  }, 120_000);
  /** Empties the log table (absent until the first log applies the migrations). */
  const emptyLog = () => sql`TRUNCATE query_log`.catch(() => undefined);
  afterAll(async () => {
    await sql?.end({ timeout: 1 }).catch(() => undefined);
    await cluster?.destroy();
  });

  it('keeps the oldest rows up to its bound while PostgreSQL is down, drops and counts the newest, and writes the kept ones once when it is back', async () => {
    await emptyLog();
    const log = await PgQueryLog.open(cluster.url, { ...QUIET, maxUnsent: 10 });
    try {
      for (let i = 0; i < 3; i++) log.push(entry(i));
      await log.flush();
      expect(log).toMatchObject({ written: 3, unsent: 0, dropped: 0 });

      await cluster.stop();
      for (let i = 3; i < 9; i++) log.push(entry(i));
      await expect(log.flush()).rejects.toBeInstanceOf(SourceUnavailableError);
      expect(log).toMatchObject({ written: 3, unsent: 6, dropped: 0 });
      // Rows taken by the failed write still count against the bound: 4 more fit, the 2 newest are dropped.
      for (let i = 9; i < 15; i++) log.push(entry(i));
      expect(log).toMatchObject({ unsent: 10, dropped: 2 });
      await expect(log.flush()).rejects.toBeInstanceOf(SourceUnavailableError);
      log.push(entry(15));
      expect(log).toMatchObject({ written: 3, unsent: 10, dropped: 3 });

      await cluster.start();
      // The driver reconnects on the next statement; a flush racing the server's start may still fail.
      await expect
        .poll(
          () =>
            log.flush().then(
              () => true,
              () => false,
            ),
          { timeout: 30_000, interval: 200 },
        )
        .toBe(true);
      expect(log).toMatchObject({ written: 13, unsent: 0, dropped: 3 });
      expect(await storedIndexes(sql)).toEqual(Array.from({ length: 13 }, (_, i) => i));
      // Nothing is sent twice by later flushes.
      log.push(entry(100));
      await log.flush();
      expect(await storedIndexes(sql)).toEqual([...Array.from({ length: 13 }, (_, i) => i), 100]);
    } finally {
      await log.close();
    }
  }, 120_000);

  it('writes a batch once when the answer to its COMMIT is lost and it is sent again', async () => {
    await emptyLog();
    const proxy = await commitAnswerDropper(Number(new URL(cluster.url).port));
    const u = new URL(cluster.url);
    u.port = String(proxy.port);
    const log = await PgQueryLog.open(u.toString(), QUIET);
    try {
      for (let i = 0; i < 5; i++) log.push(entry(i));
      proxy.arm();
      await expect(log.flush()).rejects.toBeInstanceOf(SourceUnavailableError);
      expect(proxy.dropped()).toBe(1);
      // Committed, though the log could not know: it keeps the rows.
      expect(await storedIndexes(sql)).toEqual([0, 1, 2, 3, 4]);
      expect(log).toMatchObject({ written: 0, unsent: 5 });
      for (let i = 5; i < 8; i++) log.push(entry(i));
      await log.flush();
      expect(await storedIndexes(sql)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(log).toMatchObject({ written: 8, unsent: 0, dropped: 0 });
    } finally {
      await log.close();
      await proxy.close();
    }
  }, 180_000);

  describe('two server processes', () => {
    let dir: string;
    const nodes: ServerProcess[] = [];
    let dots: number[] = [];
    beforeAll(async () => {
      dir = await tempDir('proofline-qlog-outage-');
      await ingestSmallFmcsa(path.join(dir, 'src'), dir);
      const r = await SnapshotReader.open(dir, 'fmcsa', { poolSize: 1 });
      dots = (await r.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 10')).map((x) => Number(x.dot_number));
      await r.close();
    }, 180_000);
    afterAll(async () => {
      for (const n of nodes) n.proc.kill('SIGKILL');
      await Promise.all(nodes.map((n) => exited(n.proc)));
      await removeDir(dir);
    });

    it('answer reads while PostgreSQL is down, and each counts the requests both made meanwhile exactly once when it is back', async () => {
      const env = { DATABASE_URL: cluster.url, RATE_LIMIT_FREE_PER_HOUR: '1000000' };
      nodes.push(...(await Promise.all([startServerProcess(dir, env), startServerProcess(dir, env)])));
      const [a, b] = nodes as [ServerProcess, ServerProcess];
      // The only perplexitybot requests of this suite: the stats count of that agent is exactly these.
      const ua = { 'user-agent': 'PerplexityBot/1.0' };
      const perplexity = async (node: ServerProcess) => {
        const r = await fetch(`${node.url}/api/stats`);
        return r.status === 200
          ? (((await r.json()) as { ai_queries_24h: { by_agent_type: Record<string, number> } }).ai_queries_24h.by_agent_type
              .perplexitybot ?? 0)
          : -r.status;
      };
      const health = async (node: ServerProcess) =>
        (await (await fetch(`${node.url}/api/health`)).json()) as {
          status: string;
          dependencies: Record<string, string>;
          query_log: { backend: string; unsent_rows: number; dropped_rows: number; written_rows: number };
        };
      const read = async (node: ServerProcess, i: number) =>
        expect((await fetch(`${node.url}/api/carrier/${dots[i % dots.length]}`, { headers: ua })).status).toBe(200);
      for (let i = 0; i < 4; i++) await read(a, i);
      await expect.poll(() => perplexity(b), { timeout: 15_000, interval: 200 }).toBe(4);

      await cluster.stop();
      // Warehouse reads keep answering on both nodes; each is metered and its log row kept in memory.
      for (let i = 0; i < 12; i++) await read(i % 3 ? a : b, i);
      for (const [node, n] of [
        [a, 8],
        [b, 4],
      ] as const) {
        const down = await health(node);
        expect(down.status).toBe('degraded');
        expect(['down', 'slow']).toContain(down.dependencies.postgres); // slow: no answer within the probe's deadline
        expect(down.query_log).toMatchObject({ backend: 'postgres', dropped_rows: 0 });
        expect(down.query_log.unsent_rows).toBeGreaterThanOrEqual(n);
        const stats = await fetch(`${node.url}/api/stats`);
        expect(stats.status).toBe(503);
        expect(stats.headers.get('retry-after')).toMatch(/^\d+$/);
      }

      await cluster.start();
      // Once each node's next flush succeeds, stats on either count every request once: 4 before, 12 during the outage.
      for (const node of [a, b]) await expect.poll(() => perplexity(node), { timeout: 30_000, interval: 250 }).toBe(16);
      for (const node of [a, b])
        await expect.poll(async () => (await health(node)).query_log.unsent_rows, { timeout: 15_000, interval: 250 }).toBe(0);
      const [row] = await sql`SELECT count(*)::int AS n FROM query_log WHERE agent_type = 'perplexitybot'`;
      expect(row!.n).toBe(16);
      for (const node of [a, b]) {
        expect(await perplexity(node)).toBe(16);
        const after = await health(node);
        expect(after.query_log.dropped_rows).toBe(0);
        expect(after.dependencies.postgres).toBe('up');
      }
    }, 150_000);
  });
});
