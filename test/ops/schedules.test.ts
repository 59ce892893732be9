/**
 * Nightly schedules as BullMQ job schedulers: a worker applies the configured
 * schedules on start, re-applying creates no duplicates, operator overrides
 * survive re-applying, and a scheduler's trigger job starts a run.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, getQueue, registerExtraPipelines } from '../../jobs/bullmq.ts';
import { applySchedules, countSchedulers, listSchedules, removeSchedule, resetSchedule, setSchedule } from '../../jobs/schedules.ts';
import { readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { itemLines, killAllWorkers, startWorkerProcess, uniquePrefix, waitFor, writeItems, type WorkerProcess } from './ops-helpers.ts';

describe.skipIf(!HAS_REDIS)('job schedulers', { timeout: 180_000 }, () => {
  let workers: WorkerProcess[] = [];
  let dataDir: string;
  beforeAll(async () => {
    registerExtraPipelines([opstestPipeline]);
    dataDir = await tempDir('proofline-ops-sched-');
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await killAllWorkers();
    workers = [];
    await closeQueues();
  });
  afterAll(async () => removeDir(dataDir));

  it('exist after worker startup and are not duplicated by restarts or re-applying', async () => {
    const env = { REDIS_URL: REDIS_URL!, DATA_DIR: dataDir, QUEUE_PREFIX: uniquePrefix('sched'), SCHEDULE_REGISTRY_CRON: '15 4 * * *' };
    const config = testConfig(dataDir, env);
    workers.push(await startWorkerProcess(env, []));
    const s = await getQueue(config, 'registry').getJobScheduler('registry');
    expect(s).toMatchObject({ pattern: '15 4 * * *', tz: 'America/New_York' });
    // Scheduled runs fetch from the configured remote source before parsing (fetch → parse → publish).
    expect(s!.template?.data).toEqual({ domain: 'registry', fetch: true });
    workers.push(await startWorkerProcess(env, []));
    await applySchedules(config);
    await applySchedules(config);
    expect(await countSchedulers(config, 'registry')).toBe(1);
    // One delayed trigger job for the next run, not one per apply.
    const delayed = await getQueue(config, 'registry').getDelayed();
    expect(delayed.filter((j) => j.name === 'registry:trigger')).toHaveLength(1);

    // An override survives re-applying; reset goes back to the configuration; remove disables.
    await setSchedule(config, 'registry', '0 5 * * 1-5');
    await applySchedules(config);
    expect(await getQueue(config, 'registry').getJobScheduler('registry')).toMatchObject({ pattern: '0 5 * * 1-5' });
    expect((await listSchedules(config)).find((r) => r.domain === 'registry')).toMatchObject({ source: 'override', cron: '0 5 * * 1-5' });
    await resetSchedule(config, 'registry');
    expect(await getQueue(config, 'registry').getJobScheduler('registry')).toMatchObject({ pattern: '15 4 * * *' });
    await removeSchedule(config, 'registry');
    await applySchedules(config);
    expect(await countSchedulers(config, 'registry')).toBe(0);
    await expect(setSchedule(config, 'registry', 'not a cron')).rejects.toThrow(/invalid cron/);
  });

  it('turns a scheduled trigger into a published run', async () => {
    const inputDir = path.join(dataDir, 'trigger-input');
    await writeItems(inputDir, { 'a.csv': itemLines(0, 3) });
    const env = { REDIS_URL: REDIS_URL!, DATA_DIR: dataDir, INPUT_DIR: inputDir, QUEUE_PREFIX: uniquePrefix('trig') };
    const config = testConfig(dataDir, env);
    workers.push(await startWorkerProcess(env));
    // Every second (6-field cron): the first trigger fires within a second or two.
    await setSchedule(config, 'opstest', '* * * * * *');
    const manifest = await waitFor(() => readCurrentManifest(dataDir, 'opstest'), 90_000, 'a scheduled run to publish');
    await removeSchedule(config, 'opstest');
    expect(manifest.run_id).toMatch(/^opstest-\d{8}T\d{6}-/);
  });
});
