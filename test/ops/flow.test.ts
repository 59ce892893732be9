/**
 * BullMQ flows across real worker processes (jobs/cli/worker.cli.ts) against a
 * real redis-server: every child once, publish once after all children, a
 * worker killed mid-job hands its job to another, parse failures fail at once
 * and keep their input.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, enqueueRun, getQueue, registerExtraPipelines } from '../../jobs/bullmq.ts';
import { jobIdFor } from '../../jobs/pipeline.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import {
  itemLines,
  killAllWorkers,
  readExecLog,
  startWorkerProcess,
  uniquePrefix,
  waitFor,
  waitForCompleted,
  writeItems,
  type WorkerProcess,
} from './ops-helpers.ts';

describe.skipIf(!HAS_REDIS)('BullMQ flow across worker processes', { timeout: 180_000 }, () => {
  let workers: WorkerProcess[] = [];
  const dirs: string[] = [];
  beforeAll(() => registerExtraPipelines([opstestPipeline]));
  afterEach(async () => {
    await killAllWorkers();
    workers = [];
    await closeQueues();
  });
  afterAll(async () => {
    await closeSecLimiter();
    for (const d of dirs) await removeDir(d);
  });

  async function setup(name: string, extraEnv: Record<string, string> = {}) {
    const dataDir = await tempDir(`proofline-ops-${name}-`);
    dirs.push(dataDir);
    const env = { REDIS_URL: REDIS_URL!, DATA_DIR: dataDir, QUEUE_PREFIX: uniquePrefix(name), WORKER_CONCURRENCY: '1', ...extraEnv };
    return { dataDir, inputDir: path.join(dataDir, 'input'), env, config: testConfig(dataDir, env) };
  }

  async function waitPublished(config: ReturnType<typeof testConfig>, runId: string) {
    const job = await waitForCompleted(getQueue(config, 'opstest'), jobIdFor('opstest', 'publish', runId), 90_000, 'the publish job');
    return job.returnvalue as {
      snapshot_id: string;
      children: number;
      failed_children: Array<{ step: string; key: string; error: string }>;
    };
  }

  async function snapshotSummary(dataDir: string) {
    const reader = await SnapshotReader.open(dataDir, 'opstest', { poolSize: 1 });
    try {
      const [s] = await reader.query('SELECT n, id_sum::INTEGER AS id_sum FROM summary');
      const files = await reader.query('SELECT file, count(*)::INTEGER AS n FROM items GROUP BY file ORDER BY file');
      return { summary: s, files };
    } finally {
      await reader.close();
    }
  }

  it('runs every child exactly once on 3 workers and publishes once after all of them', async () => {
    const { dataDir, inputDir, env, config } = await setup('flow', { OPS_TEST_SLOW_MS: '300' });
    await writeItems(inputDir, {
      'slow-a.csv': itemLines(0, 10),
      'slow-b.csv': itemLines(10, 20),
      'slow-c.csv': itemLines(20, 30),
      'slow-d.csv': itemLines(30, 40),
      'slow-e.csv': itemLines(40, 50),
      'slow-f.csv': itemLines(50, 60),
      'opt-bad.csv': '1,ok\nbad\n',
      'flaky-g.csv': itemLines(60, 62),
    });
    workers = await Promise.all([0, 1, 2].map(() => startWorkerProcess(env)));
    const { runId } = await enqueueRun(config, 'opstest', { inputDir });
    const result = await waitPublished(config, runId);

    const log = await readExecLog(dataDir);
    const keys = ['slow-a.csv', 'slow-b.csv', 'slow-c.csv', 'slow-d.csv', 'slow-e.csv', 'slow-f.csv'];
    for (const k of keys) {
      expect(
        log.filter((e) => e.event === 'start' && e.key === k),
        k,
      ).toHaveLength(1);
      expect(
        log.filter((e) => e.event === 'done' && e.key === k),
        k,
      ).toHaveLength(1);
    }
    // Publish ran once, after every child finished.
    const publishAt = log.findIndex((e) => e.event === 'publish');
    expect(log.filter((e) => e.event === 'publish')).toHaveLength(1);
    expect(Math.max(...log.map((e, i) => (e.event === 'done' ? i : -1)))).toBeLessThan(publishAt);
    // The children ran in more than one worker process.
    const pids = new Set(log.filter((e) => e.event === 'done').map((e) => e.pid));
    expect(pids.size).toBeGreaterThan(1);
    for (const pid of pids) expect(workers.map((w) => w.pid)).toContain(pid);

    // The parse failure failed at once (one attempt), was ignored by the parent and recorded.
    expect(log.filter((e) => e.event === 'start' && e.key === 'opt-bad.csv')).toHaveLength(1);
    expect(result.children, JSON.stringify(result)).toBe(8);
    expect(result.failed_children).toEqual([expect.objectContaining({ step: 'load', key: 'opt-bad.csv' })]);
    expect(result.failed_children[0]!.error).toMatch(/line 2/);
    const bad = await getQueue(config, 'opstest').getJob(jobIdFor('opstest', 'load', runId, 'opt-bad.csv'));
    expect(await bad!.getState()).toBe('failed');
    expect(bad!.attemptsMade).toBe(1);
    const failure = (bad!.data as { failure: { kind: string; file: string; line: number; kept_copy: string } }).failure;
    expect(failure).toMatchObject({ kind: 'parse', line: 2, file: path.join(inputDir, 'items', 'opt-bad.csv') });
    expect(existsSync(failure.kept_copy)).toBe(true);

    const snap = await snapshotSummary(dataDir);
    expect(snap.summary).toEqual({ n: 62, id_sum: (61 * 62) / 2 });
    expect(snap.files.map((f) => f.file)).toEqual(['flaky-g.csv', ...keys]);

    // The transient failure was retried (after a backoff) and then succeeded.
    expect(log.filter((e) => e.event === 'start' && e.key === 'flaky-g.csv')).toHaveLength(2);
    expect(log.filter((e) => e.event === 'done' && e.key === 'flaky-g.csv')).toHaveLength(1);
    const flaky = await getQueue(config, 'opstest').getJob(jobIdFor('opstest', 'load', runId, 'flaky-g.csv'));
    expect(await flaky!.getState()).toBe('completed');
    expect(flaky!.attemptsMade).toBe(2);
    expect(flaky!.stacktrace).toHaveLength(1);

    // SIGTERM: workers close gracefully (exit 0).
    const codes = await Promise.all(workers.map((w) => w.stop()));
    await killAllWorkers();
    expect(codes).toEqual([0, 0, 0]);
  });

  it('retries the job of a killed worker on another worker and publishes a complete snapshot', async () => {
    const { dataDir, inputDir, env, config } = await setup('kill', {
      OPS_TEST_SLOW_MS: '2500',
      // Long enough that a worker's busy event loop on a slow host never loses a live job's lock.
      JOB_LOCK_MS: '4000',
      JOB_STALLED_INTERVAL_MS: '500',
    });
    await writeItems(inputDir, {
      'a.csv': itemLines(0, 5),
      'b.csv': itemLines(5, 10),
      'slow-x.csv': itemLines(10, 20),
      'c.csv': itemLines(20, 25),
    });
    workers = await Promise.all([0, 1, 2].map(() => startWorkerProcess(env)));
    const { runId } = await enqueueRun(config, 'opstest', { inputDir });
    const started = await waitFor(
      async () => (await readExecLog(dataDir)).find((e) => e.event === 'start' && e.key === 'slow-x.csv'),
      90_000,
      'the slow job to start',
    );
    const victim = workers.find((w) => w.pid === started.pid)!;
    expect(victim).toBeDefined();
    victim.proc.kill('SIGKILL');
    await victim.exited;

    await waitPublished(config, runId);
    const log = await readExecLog(dataDir);
    const slowDone = log.filter((e) => e.event === 'done' && e.key === 'slow-x.csv');
    expect(slowDone).toHaveLength(1);
    expect(slowDone[0]!.pid).not.toBe(victim.pid);
    expect(log.filter((e) => e.event === 'start' && e.key === 'slow-x.csv').length).toBeGreaterThanOrEqual(2);
    expect(log.filter((e) => e.event === 'publish')).toHaveLength(1);
    const snap = await snapshotSummary(dataDir);
    expect(snap.summary).toEqual({ n: 25, id_sum: (24 * 25) / 2 });
    expect(snap.files).toEqual([
      { file: 'a.csv', n: 5 },
      { file: 'b.csv', n: 5 },
      { file: 'c.csv', n: 5 },
      { file: 'slow-x.csv', n: 10 },
    ]);
  });
});
