/**
 * The SEC limiter holds across processes: 4 worker processes running the
 * registry's fetch step against a local fake EDGAR server through the
 * Redis-backed limiter never exceed 10 requests in any one-second window; the
 * SEC's 403 rate-limit page pauses every holder of the limiter.
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
import { startFakeEdgar, type FakeEdgar } from '../helpers/fake-edgar.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { killAllWorkers, startWorkerProcess, uniquePrefix, waitFor, type WorkerProcess } from './ops-helpers.ts';

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
  beforeAll(() => {
    redis = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('admits at most max per window and makes the rest wait', async () => {
    const limiter = new RedisRateLimiter(redis, { key: `${uniquePrefix('lim')}:sec`, max: 5, windowMs: 400 });
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        const release = await limiter.acquire();
        times.push(Date.now());
        release();
      }),
    );
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
    // Timed from before the pause is set, so a slow reply from Redis cannot shorten the measured wait.
    const t0 = Date.now();
    await a.pause(300);
    (await b.acquire())();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });
});

describe.skipIf(!HAS_REDIS || !HAS_SHARED)(
  'SEC limit across 4 worker processes, through the registry fetch step',
  { timeout: 180_000 },
  () => {
    let edgar: FakeEdgar;
    let dataDir: string;
    // 45 CIKs, each served the same small real submissions file (the parse dedupes companies by CIK).
    const ciks = Array.from({ length: 45 }, (_, i) => 1_000_000 + i);
    beforeAll(async () => {
      registerExtraPipelines([opstestPipeline]);
      dataDir = await tempDir('proofline-ops-sec-');
      const root = path.join(dataDir, 'edgar');
      await mkdir(path.join(root, 'submissions'), { recursive: true });
      const body = readFileSync(fixture('sec/submissions/CIK0001800903.json'));
      for (const cik of ciks) await writeFile(path.join(root, 'submissions', `CIK${String(cik).padStart(10, '0')}.json`), body);
      edgar = await startFakeEdgar(root);
    });
    afterEach(async () => {
      await killAllWorkers();
      await closeQueues();
    });
    afterAll(async () => {
      await edgar.close();
      await removeDir(dataDir);
    });

    it('keeps the fake EDGAR server at or under 10 requests in any one-second window', async () => {
      const inputDir = path.join(dataDir, 'input');
      const env = {
        REDIS_URL: REDIS_URL!,
        DATA_DIR: dataDir,
        INPUT_DIR: inputDir,
        QUEUE_PREFIX: uniquePrefix('sec'),
        WORKER_CONCURRENCY: '2',
        SEC_USER_AGENT: 'Proofline Tests tests@proofline.example',
        SEC_WWW_BASE_URL: edgar.baseUrl,
        SEC_DATA_BASE_URL: edgar.baseUrl,
        SEC_RATE_LIMIT: '9',
        EDGAR_FETCH_CIKS: ciks.join(','),
        EDGAR_FETCH_KINDS: 'submissions',
        EDGAR_FETCH_BATCH: '5',
      };
      const config = testConfig(dataDir, env);
      await Promise.all([0, 1, 2, 3].map(() => startWorkerProcess(env, ['--no-schedules', '--domains', 'registry'])));
      const { runId } = await enqueueRun(config, 'registry', { inputDir });
      await waitFor(
        async () => {
          const j = await getQueue(config, 'registry').getJob(jobIdFor('registry', 'publish', runId));
          if (j && (await j.getState()) === 'failed') throw new Error(`publish failed: ${j.failedReason}`);
          return j && (await j.getState()) === 'completed';
        },
        120_000,
        'the publish job',
      );
      const hits = edgar.hits.map((h) => h.at);
      expect(hits).toHaveLength(45);
      const t0 = Math.min(...hits);
      expect(maxPerSecond(hits), JSON.stringify(hits.map((h) => h - t0))).toBeLessThanOrEqual(10);
      // The 9 fetch jobs (5 CIKs each) really ran on the SEC queue in several processes.
      const fetchJobs = (await getQueue(config, 'sec').getJobs(['completed'], 0, 100)).filter(
        (j) => j.id?.includes(runId) && j.name === 'registry:fetch',
      );
      expect(fetchJobs).toHaveLength(9);
      expect(new Set(fetchJobs.map((j) => j.processedBy)).size).toBeGreaterThan(1);
    });
  },
);

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
    const env = {
      REDIS_URL: REDIS_URL!,
      DATA_DIR: dataDir,
      QUEUE_PREFIX: uniquePrefix('403'),
      SEC_DATA_BASE_URL: baseUrl,
      SEC_403_PAUSE_MS: '2000',
    };
    const config = testConfig(dataDir, env);
    workers = [await startWorkerProcess(env)];
    const { runId } = await enqueueRun(config, 'opstest', { inputDir });
    await waitFor(
      async () => {
        const j = await getQueue(config, 'opstest').getJob(jobIdFor('opstest', 'publish', runId));
        return j && (await j.getState()) === 'completed';
      },
      90_000,
      'the publish job',
    );
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
