/**
 * Incremental FMCSA runs through the BullMQ runner (real Redis, workers in this process): the plan job links the
 * reused files' parts into the run before the flow's children run, the publish job publishes over old and new
 * parts, and the snapshot equals an in-process full run over the same files. Skips without Redis unless
 * REQUIRE_REDIS=1.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueRun, getQueue, startWorkers, type WorkerSet } from '../../jobs/bullmq.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import type { Config } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { expectSameRows, publishedRows } from '../helpers/snapshot-rows.ts';
import { waitForCompleted } from '../ops/ops-helpers.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

describe.skipIf(!HAS_REDIS)('incremental FMCSA runs through BullMQ (real Redis)', () => {
  let root: string;
  let workers: WorkerSet | undefined;
  // A database of its own so other suites' queues never mix with this one.
  const url = `${(REDIS_URL ?? '').replace(/\/\d*$/, '')}/6`;

  beforeAll(async () => {
    root = await tempDir('proofline-fmcsa-incremental-bullmq-');
    // The sample under root/input (its in-process ingest goes to a warehouse this suite does not use).
    await ingestSmallFmcsa(root, path.join(root, 'unused'), {}, 200);
  }, 120_000);
  afterAll(async () => {
    await workers?.close();
    await removeDir(root);
  });

  /**
   * Runs the fmcsa flow and returns the publish job's return value. The job is read again once completed: a job
   * read while active and found completed a moment later still holds its old, null return value.
   */
  async function runFlow(config: Config): Promise<{ children: number; incremental: unknown }> {
    const { runId } = await enqueueRun(config, 'fmcsa', { inputDir: path.join(root, 'input'), force: true });
    const job = await waitForCompleted(getQueue(config, 'fmcsa'), `fmcsa:publish:${runId}`, 120_000, 'the publish job');
    return job.returnvalue;
  }

  it('a night with one changed file parses only it and publishes what a full run publishes', async () => {
    const config = testConfig(path.join(root, 'data'), { REDIS_URL: url });
    await getQueue(config, 'fmcsa').obliterate({ force: true });
    workers = startWorkers(config, silentLogger, { concurrency: 2, domains: ['fmcsa'] });
    const first = await runFlow(config);
    const files = first.children;
    expect(first.incremental).toEqual({ parsed: files, reused: 0, removed: 0 });

    const crash = path.join(root, 'input', 'fmcsa', 'crash', 'Crash_File.csv');
    const lines = (await readFile(crash, 'utf8')).split('\n');
    await writeFile(crash, lines.filter((_l, i) => i === 0 || i % 3 !== 0).join('\n'));
    const second = await runFlow(config);
    expect(second.children).toBe(1);
    expect(second.incremental).toEqual({ parsed: 1, reused: files - 1, removed: 0 });

    const full = path.join(root, 'full');
    await runPipelineInProcess(fmcsaPipeline, {
      config: testConfig(full),
      log: silentLogger,
      inputDir: path.join(root, 'input'),
      force: true,
    });
    expectSameRows(await publishedRows(config.dataDir, 'fmcsa'), await publishedRows(full, 'fmcsa'));
  }, 240_000);
});
