/**
 * The BullMQ runner over a real Redis: the same registry pipeline as the
 * in-process runner, as a flow (plan → children → publish), publishing the
 * same rows. Skips without Redis unless REQUIRE_REDIS=1.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueEvents } from 'bullmq';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentPointer } from '../../lib/warehouse/snapshot.ts';
import { enqueueRun, getQueue, queueName, redisConnection, startWorkers, type WorkerSet } from '../../jobs/bullmq.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';

describe.skipIf(!HAS_REDIS)('BullMQ runner (real Redis)', () => {
  let root: string;
  let inputDir: string;
  let workers: WorkerSet;
  // A database of its own so other suites' queues never mix with this one.
  const url = `${(REDIS_URL ?? '').replace(/\/\d*$/, '')}/5`; // evaluated while collecting, also when skipped

  beforeAll(async () => {
    root = await tempDir();
    inputDir = path.join(root, 'input');
    await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
  });
  afterAll(async () => {
    await workers?.close();
    await removeDir(root);
  });

  it('runs plan, children and publish as a flow and publishes the snapshot once', async () => {
    const config = testConfig(path.join(root, 'data'), { REDIS_URL: url });
    const q = getQueue(config, 'registry');
    await q.obliterate({ force: true });
    workers = startWorkers(config, silentLogger, { concurrency: 2, domains: ['registry'] });
    const events = new QueueEvents(queueName('registry'), { connection: redisConnection(url) });
    await events.waitUntilReady();
    const { runId } = await enqueueRun(config, 'registry', { inputDir });
    const publishId = `registry:publish:${runId}`;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const job = await q.getJob(publishId);
      const state = job ? await job.getState() : 'missing';
      if (state === 'completed') break;
      if (state === 'failed') throw new Error(`publish failed: ${job!.failedReason}`);
      if (Date.now() > deadline) throw new Error(`publish not done, state ${state}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const ptr = await readCurrentPointer(config.dataDir, 'registry');
    expect(ptr?.run_id).toBe(runId);
    const reader = await SnapshotReader.open(config.dataDir, 'registry');
    expect((await reader.query('SELECT count(*)::INTEGER AS n FROM companies'))[0].n).toBe(300);
    await reader.close();
    const children = await q.getJobs(['completed']);
    const steps = children.filter((j) => j.name === 'registry:submissions' || j.name === 'registry:tickers');
    expect(new Set(steps.map((j) => j.id)).size).toBe(steps.length);
    expect(steps.every((j) => j.id!.includes(runId))).toBe(true);
    // Enqueuing the same run again collapses onto the same job id.
    const again = await enqueueRun(config, 'registry', { inputDir, runId });
    expect(again.jobId).toBe(`registry:plan:${runId}`);
    expect((await q.getJobs(['waiting', 'active', 'delayed'])).filter((j) => j.id === again.jobId)).toHaveLength(0);
    await events.close();
  });
});
