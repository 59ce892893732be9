/**
 * The fetch step inside the BullMQ flow, with real worker processes, a real
 * redis-server and a local fake EDGAR replaying ../shared/fixtures/sec: the
 * registry run is the nested flow publish ← parse(batch) ← fetch(CIK batch);
 * every fetch and parse job runs exactly once, publish once after all of them;
 * a fetch that fails transiently is retried alone and the run still publishes;
 * a scheduled trigger runs the fetching flow.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, enqueueRun, getQueue, registerExtraPipelines } from '../../jobs/bullmq.ts';
import { jobIdFor } from '../../jobs/pipeline.ts';
import { removeSchedule, setSchedule } from '../../jobs/schedules.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { startFakeEdgar, type FakeEdgar } from '../helpers/fake-edgar.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { killAllWorkers, startWorkerProcess, uniquePrefix, waitFor, waitForCompleted, type WorkerProcess } from './ops-helpers.ts';

const UA = 'Proofline Tests tests@proofline.example';
// Six fixture companies (Alphabet has companyfacts but no submissions: a 404 the fetch reports as missing).
const CIKS = '320193,789019,1045810,1318605,1652044,310522';

describe.skipIf(!HAS_REDIS || !HAS_SHARED)('registry fetch step in the BullMQ flow', { timeout: 180_000 }, () => {
  let workers: WorkerProcess[] = [];
  const dirs: string[] = [];
  const servers: FakeEdgar[] = [];
  beforeAll(() => registerExtraPipelines([opstestPipeline]));
  afterEach(async () => {
    await killAllWorkers();
    workers = [];
    await closeQueues();
  });
  afterAll(async () => {
    await closeSecLimiter();
    for (const s of servers) await s.close();
    for (const d of dirs) await removeDir(d);
  });

  async function setup(
    name: string,
    failures: Record<string, { times: number; status?: number; body?: string }> = {},
    extraEnv: Record<string, string> = {},
  ) {
    const edgar = await startFakeEdgar(fixture('sec'), { failures });
    servers.push(edgar);
    const dataDir = await tempDir(`proofline-ops-fetch-${name}-`);
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const env = {
      REDIS_URL: REDIS_URL!,
      DATA_DIR: dataDir,
      INPUT_DIR: inputDir,
      QUEUE_PREFIX: uniquePrefix(name),
      WORKER_CONCURRENCY: '1',
      SEC_USER_AGENT: UA,
      SEC_WWW_BASE_URL: edgar.baseUrl,
      SEC_DATA_BASE_URL: edgar.baseUrl,
      SEC_RATE_LIMIT: '10',
      EDGAR_FETCH_CIKS: CIKS,
      EDGAR_FETCH_TICKERS: '1',
      EDGAR_FETCH_BATCH: '2',
      ...extraEnv,
    };
    return { edgar, dataDir, inputDir, env, config: testConfig(dataDir, env) };
  }

  async function waitPublished(config: ReturnType<typeof testConfig>, runId: string): Promise<Job> {
    return waitForCompleted(getQueue(config, 'registry'), jobIdFor('registry', 'publish', runId), 120_000, 'the registry publish job');
  }

  /** Every job of the run (registry queue and SEC queue), by step. */
  async function runJobs(config: ReturnType<typeof testConfig>, runId: string) {
    const all: Job[] = [];
    for (const q of ['registry', 'sec']) {
      for (const j of await getQueue(config, q).getJobs(['completed', 'failed', 'active', 'wait', 'waiting-children', 'delayed'], 0, 1000))
        if (j.id?.includes(runId)) all.push(j);
    }
    const step = (j: Job) => j.name.split(':')[1]!;
    return {
      all,
      fetch: all.filter((j) => step(j) === 'fetch'),
      parse: all.filter((j) => !['fetch', 'plan', 'publish'].includes(step(j))),
    };
  }

  it('runs each fetch and parse job exactly once on 3 workers, parse after its fetches, publish once after all', async () => {
    const { edgar, dataDir, inputDir, env, config } = await setup('flow');
    workers = await Promise.all([0, 1, 2].map(() => startWorkerProcess(env, ['--no-schedules', '--domains', 'registry'])));
    const { runId } = await enqueueRun(config, 'registry', { inputDir });
    const publish = await waitPublished(config, runId);
    const { fetch, parse } = await runJobs(config, runId);

    // 1 ticker file + 3 CIK batches × (submissions, companyfacts): 7 fetch jobs; parse: tickers, submissions, companyfacts.
    expect(fetch.map((j) => j.id!.split('~')[1]).sort()).toEqual([
      'edgar-fetch-companyfacts-0000310522-2',
      'edgar-fetch-companyfacts-0000789019-2',
      'edgar-fetch-companyfacts-0001318605-2',
      'edgar-fetch-submissions-0000310522-2',
      'edgar-fetch-submissions-0000789019-2',
      'edgar-fetch-submissions-0001318605-2',
      'edgar-fetch-tickers',
    ]);
    expect(parse.map((j) => j.name).sort()).toEqual(['registry:companyfacts', 'registry:submissions', 'registry:tickers']);
    for (const j of [...fetch, ...parse, publish]) {
      expect(await j.getState(), j.id).toBe('completed');
      expect(j.attemptsStarted, j.id).toBe(1);
    }
    // Every EDGAR file was requested exactly once, with the declared User-Agent.
    const paths = edgar.hits.map((h) => h.path);
    expect(paths.length).toBe(13);
    expect(new Set(paths).size).toBe(13);
    expect(edgar.hits.every((h) => h.userAgent === UA)).toBe(true);
    // Nesting: each parse job ran after the fetch jobs that are its children; publish after everything.
    for (const p of parse) {
      const kids = Object.values(await p.getChildrenValues<{ step: string; key: string }>());
      expect(kids.length, p.id).toBeGreaterThan(0);
      expect(kids.every((k) => k.step === 'fetch')).toBe(true);
      const mine = fetch.filter((f) => kids.some((k) => f.id!.endsWith(`~${k.key}`)));
      expect(mine).toHaveLength(kids.length);
      for (const f of mine) expect(p.processedOn!).toBeGreaterThanOrEqual(f.finishedOn!);
    }
    expect(publish.processedOn!).toBeGreaterThanOrEqual(Math.max(...[...fetch, ...parse].map((j) => j.finishedOn!)));
    // The jobs were spread over more than one worker process.
    expect(new Set([...fetch, ...parse].map((j) => j.processedBy)).size).toBeGreaterThan(1);

    const reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const companies = await reader.query(`SELECT cik, json_extract_string(origin, '$.source_url') AS url FROM companies ORDER BY cik`);
      expect(companies.map((c) => Number(c.cik))).toEqual([310522, 320193, 789019, 1045810, 1318605]);
      expect(companies.every((c) => String(c.url).startsWith(`${edgar.baseUrl}/submissions/`))).toBe(true);
    } finally {
      await reader.close();
    }
  });

  it('retries a transiently failing fetch job alone and still publishes', async () => {
    // NVIDIA's submissions answer 503 five times: the client's 4 attempts fail the first attempt of its
    // job (the batch Microsoft + NVIDIA), after Microsoft's file was written.
    const { edgar, inputDir, env, config } = await setup('retry', { '/submissions/CIK0001045810.json': { times: 5 } });
    workers = await Promise.all([0, 1, 2].map(() => startWorkerProcess(env, ['--no-schedules', '--domains', 'registry'])));
    const { runId } = await enqueueRun(config, 'registry', { inputDir });
    const publish = await waitPublished(config, runId);
    expect((publish.returnvalue as { failed_children: unknown[] }).failed_children).toEqual([]);
    const { fetch, parse } = await runJobs(config, runId);
    const flaky = fetch.find((j) => j.id!.endsWith('~edgar-fetch-submissions-0000789019-2'))!;
    expect(await flaky.getState()).toBe('completed');
    expect(flaky.attemptsStarted).toBe(2);
    expect(flaky.stacktrace).toHaveLength(1);
    for (const j of [...fetch.filter((f) => f !== flaky), ...parse, publish]) expect(j.attemptsStarted, j.id).toBe(1);
    // The retry fetched only what the failed attempt had not written (Microsoft's file was kept).
    expect(edgar.count('/submissions/CIK0001045810.json')).toBe(6);
    expect(edgar.count('/submissions/CIK0000789019.json')).toBe(1);
  });

  it('on the SEC 403 rate-limit page, pauses every SEC request and hands the fetch job back without using an attempt', async () => {
    const page = readFileSync(fixture('sec/filings/errors/sec-rate-exceeded-403.html'), 'utf8');
    const { edgar, inputDir, env, config } = await setup(
      '403',
      { '/submissions/CIK0000310522.json': { times: 1, status: 403, body: page } },
      { SEC_403_PAUSE_MS: '2000' },
    );
    workers = [await startWorkerProcess(env, ['--no-schedules', '--domains', 'registry'])];
    const { runId } = await enqueueRun(config, 'registry', { inputDir });
    await waitPublished(config, runId);
    const at403 = edgar.hits.find((h) => h.status === 403)!;
    const after = edgar.hits.filter((h) => h.at > at403.at);
    // Nobody called the SEC during the pause, then the page's request was made again and succeeded.
    expect(after.length).toBeGreaterThan(0);
    expect(Math.min(...after.map((h) => h.at)) - at403.at).toBeGreaterThanOrEqual(1900);
    expect(edgar.hits.filter((h) => h.path === at403.path).map((h) => h.status)).toEqual([403, 200]);
    const { fetch } = await runJobs(config, runId);
    const handedBack = fetch.find((j) => j.id!.endsWith('~edgar-fetch-submissions-0000310522-2'))!;
    expect(await handedBack.getState()).toBe('completed');
    expect(handedBack.stacktrace ?? []).toEqual([]);
    expect(workers[0]!.output()).toMatch(/handing the job back/);
  });

  it('runs the fetching flow from a scheduled trigger', async () => {
    const { edgar, dataDir, env, config } = await setup('sched');
    workers = [await startWorkerProcess(env, ['--domains', 'registry'])];
    await setSchedule(config, 'registry', '* * * * * *');
    const manifest = await waitFor(() => readCurrentManifest(dataDir, 'registry'), 120_000, 'a scheduled registry run to publish');
    await removeSchedule(config, 'registry');
    expect(manifest.run_id).toMatch(/^registry-\d{8}T\d{6}-/);
    const { fetch } = await runJobs(config, manifest.run_id);
    expect(fetch).toHaveLength(7);
    expect(edgar.count('/files/company_tickers_exchange.json')).toBeGreaterThanOrEqual(1);
  });
});
