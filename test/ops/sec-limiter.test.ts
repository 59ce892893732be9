/**
 * The SEC limiter holds across processes: 4 worker processes fetching from a
 * local fake EDGAR server through the Redis-backed limiter never exceed 10
 * requests in any one-second window; the SEC's 403 rate-limit page pauses
 * every holder of the limiter.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, enqueueRun, getQueue, registerExtraPipelines } from '../../jobs/bullmq.ts';
import { jobIdFor } from '../../jobs/pipeline.ts';
import { isSecRateLimitPage, RedisRateLimiter, secTransientResponse } from '../../lib/sec-limiter.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { killAllWorkers, readExecLog, startWorkerProcess, uniquePrefix, waitFor, type WorkerProcess } from './ops-helpers.ts';

/** Most requests seen in any window [t, t + 1000 ms). */
function maxPerSecond(times: number[]): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= 1000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('maxPerSecond', () => {
  it('counts the busiest one-second window', () => {
    expect(maxPerSecond([0, 100, 999, 1000, 1500, 1999])).toBe(3);
    expect(maxPerSecond([])).toBe(0);
  });
});

describe.skipIf(!HAS_SHARED)('isSecRateLimitPage', () => {
  it('recognises the SEC 403 rate-limit page and not a bare 403', () => {
    const page = readFileSync(fixture('sec/filings/errors/sec-rate-exceeded-403.html'), 'utf8');
    expect(isSecRateLimitPage(403, page)).toBe(true);
    expect(isSecRateLimitPage(200, page)).toBe(false);
    expect(isSecRateLimitPage(403, '<html>Forbidden</html>')).toBe(false);
  });
});

describe.skipIf(!HAS_REDIS)('RedisRateLimiter', () => {
  let redis: Redis;
  beforeAll(() => { redis = new Redis(REDIS_URL!); });
  afterAll(async () => { await redis.quit(); });

  it('admits at most max per window and makes the rest wait', async () => {
    const limiter = new RedisRateLimiter(redis, { key: `${uniquePrefix('lim')}:sec`, max: 5, windowMs: 400 });
    const times: number[] = [];
    await Promise.all(Array.from({ length: 12 }, async () => { const release = await limiter.acquire(); times.push(Date.now()); release(); }));
    times.sort((a, b) => a - b);
    // 12 acquisitions at 5 per 400 ms need at least two full windows.
    expect(times[11]! - times[0]!).toBeGreaterThanOrEqual(790);
    for (let i = 5; i < times.length; i++) expect(times[i]! - times[i - 5]!).toBeGreaterThanOrEqual(395);
  });

  it('counts a slot until a window after its response, however long the request takes', async () => {
    const limiter = new RedisRateLimiter(redis, { key: `${uniquePrefix('hold')}:sec`, max: 1, windowMs: 200 });
    const release = await limiter.acquire();
    const t0 = Date.now();
    setTimeout(release, 300); // a slow request: in flight for 300 ms
    (await limiter.acquire())();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(480);
  });

  it('pauses every holder of the key on the SEC rate-limit page', async () => {
    const key = `${uniquePrefix('pause')}:sec`;
    const a = new RedisRateLimiter(redis, { key, max: 9 });
    const b = new RedisRateLimiter(redis, { key, max: 9 });
    expect(secTransientResponse(a)(403, '<h1>Request Rate Threshold Exceeded</h1>')).toBeNull();
    await waitFor(async () => (await b.pausedFor()) > 0, 2000, 'the pause to reach Redis');
    expect(await b.pausedFor()).toBeGreaterThan(9 * 60_000);
    await a.pause(300);
    const t0 = Date.now();
    (await b.acquire())();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });
});

describe.skipIf(!HAS_REDIS)('SEC limit across 4 worker processes', { timeout: 180_000 }, () => {
  let server: Server;
  let baseUrl: string;
  const hits: number[] = [];
  let workers: WorkerProcess[] = [];
  let dataDir: string;
  beforeAll(async () => {
    registerExtraPipelines([opstestPipeline]);
    server = createServer((req, res) => {
      hits.push(Date.now());
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dataDir = await tempDir('proofline-ops-sec-');
  });
  afterEach(async () => {
    await killAllWorkers();
    workers = [];
    await closeQueues();
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await removeDir(dataDir);
  });

  it('keeps the fake EDGAR server at or under 10 requests in any one-second window', async () => {
    const inputDir = path.join(dataDir, 'input');
    await mkdir(inputDir, { recursive: true });
    const paths = Array.from({ length: 45 }, (_, i) => `/submissions/CIK${String(i).padStart(10, '0')}.json`);
    await writeFile(path.join(inputDir, 'fetch.json'), JSON.stringify(paths));
    const env = { REDIS_URL: REDIS_URL!, DATA_DIR: dataDir, QUEUE_PREFIX: uniquePrefix('sec'), SEC_DATA_BASE_URL: baseUrl, SEC_RATE_LIMIT: '9', WORKER_CONCURRENCY: '2' };
    const config = testConfig(dataDir, env);
    workers = await Promise.all([0, 1, 2, 3].map(() => startWorkerProcess(env)));
    const { runId } = await enqueueRun(config, 'opstest', { inputDir });
    await waitFor(async () => {
      const j = await getQueue(config, 'opstest').getJob(jobIdFor('opstest', 'publish', runId));
      return j && (await j.getState()) === 'completed';
    }, 90_000, 'the publish job');
    expect(hits).toHaveLength(45);
    const t0 = Math.min(...hits);
    expect(maxPerSecond(hits), JSON.stringify(hits.map((h) => h - t0))).toBeLessThanOrEqual(10);
    // The fetches really ran in several processes at once (on the SEC queue).
    const pids = new Set((await readExecLog(dataDir)).filter((e) => e.event === 'done').map((e) => e.pid));
    expect(pids.size).toBeGreaterThan(1);
  });
});

describe.skipIf(!HAS_REDIS)('SEC 403 rate-limit page', { timeout: 180_000 }, () => {
  let server: Server;
  let baseUrl: string;
  const hits: Array<{ at: number; status: number }> = [];
  let workers: WorkerProcess[] = [];
  let dataDir: string;
  const page = '<html><body><h1>Request Rate Threshold Exceeded</h1></body></html>';
  beforeAll(async () => {
    registerExtraPipelines([opstestPipeline]);
    server = createServer((req, res) => {
      const first = hits.length === 0;
      hits.push({ at: Date.now(), status: first ? 403 : 200 });
      res.statusCode = first ? 403 : 200;
      res.end(first ? page : JSON.stringify({ path: req.url }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dataDir = await tempDir('proofline-ops-403-');
  });
  afterAll(async () => {
    await killAllWorkers();
    await closeQueues();
    await new Promise((r) => server.close(r));
    await removeDir(dataDir);
  });

  it('pauses SEC requests for the configured time and hands the job back without using an attempt', async () => {
    const inputDir = path.join(dataDir, 'input');
    await mkdir(inputDir, { recursive: true });
    await writeFile(path.join(inputDir, 'fetch.json'), JSON.stringify(['/a.json', '/b.json', '/c.json']));
    const env = { REDIS_URL: REDIS_URL!, DATA_DIR: dataDir, QUEUE_PREFIX: uniquePrefix('403'), SEC_DATA_BASE_URL: baseUrl, SEC_403_PAUSE_MS: '2000' };
    const config = testConfig(dataDir, env);
    workers = [await startWorkerProcess(env)];
    const { runId } = await enqueueRun(config, 'opstest', { inputDir });
    await waitFor(async () => {
      const j = await getQueue(config, 'opstest').getJob(jobIdFor('opstest', 'publish', runId));
      return j && (await j.getState()) === 'completed';
    }, 90_000, 'the publish job');
    expect(hits.map((h) => h.status)).toEqual([403, 200, 200, 200]);
    // Nobody called the SEC during the pause.
    expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(1900);
    const fetchJob = await getQueue(config, 'sec').getJob(jobIdFor('opstest', 'fetch', runId, 'fetch-0'));
    expect(await fetchJob!.getState()).toBe('completed');
    // Handed back (RateLimitError), never failed: no failed attempt was recorded.
    expect(workers.map((w) => w.output()).join('\n')).toMatch(/handing the job back/);
    expect(fetchJob!.failedReason ?? null).toBeNull();
    expect(fetchJob!.stacktrace ?? []).toEqual([]);
  });
});
