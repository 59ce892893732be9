/**
 * The whole nightly registry flow (EDGAR daily increment) through BullMQ worker processes and a real Redis,
 * against the replay server (recorded real bodies at the real EDGAR paths), with faults injected mid-run: a daily
 * index answering 503, the SEC's real 403 rate-limit page, a filing cut short, a filing that never answers (the
 * client's timeout), and a worker killed with SIGKILL while it downloads. The run completes and publishes once,
 * every filing on disk is whole and parsed once into people; the SEC request rate counted at the replay server
 * never exceeds 10 in any second. Run again, it requests nothing and publishes nothing.
 */
import { readLedger } from '../../lib/warehouse/incremental.ts';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Job } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, enqueueRun, getQueue, registerExtraPipelines, SEC_QUEUE } from '../../jobs/bullmq.ts';
import { jobIdFor } from '../../jobs/pipeline.ts';
import { dailyIndexUrlPath, filingFile, readDailyCursor } from '../../jobs/registry/edgar-daily.ts';
import { completeSubmissionProblem } from '../../ingest/edgar/sgml.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { listSnapshots, readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { FIXTURES, fixture, HAS_SHARED } from '../helpers/shared.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { killAllWorkers, startWorkerProcess, uniquePrefix, waitFor, waitForCompleted, type WorkerProcess } from './ops-helpers.ts';

const UA = 'Proofline Tests tests@proofline.example';
// Forms 4 filed 2025-03-07 (two), 2025-03-12 (one) and 2025-03-18 (three), by issuer CIK.
const FILINGS: Record<number, string> = {
  1835856: '0001493152-25-009612',
  1327811: '0001327811-25-000050',
  1158463: '0001158463-25-000044',
  1387467: '0001387467-25-000038',
  1617553: '0001617553-25-000024',
  1883685: '0001104659-25-025206',
};
const urlOf = (cik: number) => `/Archives/edgar/data/${cik}/${FILINGS[cik]}.txt`;

describe.skipIf(!HAS_REDIS || !HAS_SHARED)('nightly registry flow on BullMQ against the replay server', { timeout: 300_000 }, () => {
  let replay: ReplayServer;
  let workers: WorkerProcess[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    registerExtraPipelines([opstestPipeline]);
    replay = await startReplayServer(FIXTURES);
  });
  afterEach(async () => {
    await killAllWorkers();
    workers = [];
    await closeQueues();
  });
  afterAll(async () => {
    await closeSecLimiter();
    await replay.close();
    for (const d of dirs) await removeDir(d);
  });

  it('completes a night with faults injected, publishes once, and a second run requests and publishes nothing', async () => {
    const dataDir = await tempDir('proofline-nightly-replay-');
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const env = {
      REDIS_URL: REDIS_URL!,
      DATA_DIR: dataDir,
      INPUT_DIR: inputDir,
      QUEUE_PREFIX: uniquePrefix('nightly'),
      WORKER_CONCURRENCY: '1',
      SEC_USER_AGENT: UA,
      SEC_WWW_BASE_URL: replay.baseUrl,
      SEC_DATA_BASE_URL: replay.baseUrl,
      SEC_RATE_LIMIT: '10',
      SEC_403_PAUSE_MS: '5000',
      SEC_TIMEOUT_MS: '4000',
      EDGAR_DAILY_INDEX: '1',
      EDGAR_FETCH_CIKS: Object.keys(FILINGS).join(','),
      EDGAR_FETCH_BATCH: '1',
      EDGAR_DAILY_SINCE: '2025-03-05',
      EDGAR_DAILY_UNTIL: '2025-03-18',
      // Long enough that a worker's event loop busy parsing on a slow host never loses its job's lock.
      JOB_LOCK_MS: '4000',
      JOB_STALLED_INTERVAL_MS: '500',
    };
    const config = testConfig(dataDir, env);
    replay.fault(dailyIndexUrlPath('2025-03-10'), { times: 2, status: 503 });
    replay.fault(urlOf(1327811), {
      times: 1,
      status: 403,
      body: readFileSync(fixture('sec/filings/errors/sec-rate-exceeded-403.html'), 'utf8'),
    });
    replay.fault(urlOf(1158463), { times: 1, mode: 'truncate' });
    replay.fault(urlOf(1387467), { times: 1, mode: 'hang' });
    replay.fault(urlOf(1617553), { times: 1, mode: 'hang' });

    workers = await Promise.all([0, 1, 2].map(() => startWorkerProcess(env, ['--no-schedules', '--domains', 'registry'])));
    const from = replay.hits.length;
    const { runId } = await enqueueRun(config, 'registry', { inputDir });

    // SIGKILL the worker that is downloading 1617553's filing (its request hangs until the kill).
    await waitFor(
      async () => replay.hits.slice(from).some((h) => h.path === urlOf(1617553)),
      120_000,
      'the request for the filing to kill during',
    );
    const secQueue = getQueue(config, SEC_QUEUE);
    const active = await waitFor(
      async () => (await secQueue.getJobs(['active'])).find((j) => JSON.stringify(j.data).includes(FILINGS[1617553]!)),
      5_000,
      'the active fetch job',
    );
    const victim = workers.find((w) => active.processedBy?.endsWith(`:${w.pid}`))!;
    expect(victim, `processedBy ${active.processedBy}`).toBeDefined();
    victim.proc.kill('SIGKILL');
    await victim.exited;

    const publish = await waitForCompleted(
      getQueue(config, 'registry'),
      jobIdFor('registry', 'publish', runId),
      240_000,
      'the registry publish job',
    );
    expect((publish.returnvalue as { failed_children: unknown[] }).failed_children).toEqual([]);
    // Incremental: a first night parses everything it fetched; the snapshot's ledger lists the fetched files, so the
    // next night reuses them (registry-incremental.test.ts).
    const inc = (publish.returnvalue as { incremental: { parsed: number; reused: number } }).incremental;
    expect(inc.reused).toBe(0);
    expect(inc.parsed).toBeGreaterThan(0);
    const ledger = (await readLedger(dataDir, 'registry', await readCurrentManifest(dataDir, 'registry')))!;
    expect(ledger.some((e) => e.path.startsWith('sec/filings/'))).toBe(true);
    const hits = replay.hits.slice(from);

    // Faults: the 503 index retried inside the plan job, the 403 page paused every SEC request for 5 s, the cut-short
    // and the hanging filings fetched again, the killed worker's job finished by another worker.
    expect(hits.filter((h) => h.path === dailyIndexUrlPath('2025-03-10')).map((h) => h.status)).toEqual([503, 503, 404]);
    const at403 = hits.find((h) => h.status === 403)!;
    // Requests another worker was admitted for before the pause reached Redis may land up to a second after the 403
    // (admission and sending are apart on a busy host); none may be sent later in the pause, and requests resume.
    const afterPause = hits.filter((h) => h.at > at403.at);
    const duringPause = afterPause.filter((h) => h.at - at403.at > 1000 && h.at - at403.at < 4900);
    expect(duringPause.map((h) => `${h.path} +${h.at - at403.at} ms`)).toEqual([]);
    expect(afterPause.some((h) => h.at - at403.at >= 4900)).toBe(true);
    for (const cik of [1327811, 1158463, 1387467, 1617553]) expect(hits.filter((h) => h.path === urlOf(cik)).length, String(cik)).toBe(2);
    for (const cik of [1835856, 1883685]) expect(hits.filter((h) => h.path === urlOf(cik)).length, String(cik)).toBe(1);
    expect(hits.every((h) => h.userAgent === UA)).toBe(true);
    expect(replay.maxSecRate()).toBeLessThanOrEqual(10);

    // Every filing on disk is whole, parsed once, published once.
    for (const [cik, acc] of Object.entries(FILINGS))
      expect(completeSubmissionProblem(await readFile(filingFile(path.join(inputDir, 'sec'), Number(cik), acc)))).toBeNull();
    expect(await listSnapshots(dataDir, 'registry')).toHaveLength(1);
    expect(await readDailyCursor(dataDir)).toBe('2025-03-18');
    const docJobs: Job[] = (await getQueue(config, 'registry').getJobs(['completed'], 0, 1000)).filter(
      (j) => j.name === 'registry:documents' && j.id?.includes(runId),
    );
    expect(docJobs.length).toBeGreaterThan(0);
    for (const j of docJobs) expect(j.attemptsStarted, j.id).toBe(1);
    const reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const roles = await reader.query(
        `SELECT cik, count(DISTINCT accession)::INTEGER AS n FROM people_roles WHERE source_kind = 'ownership' GROUP BY cik ORDER BY cik`,
      );
      expect(roles.map((r) => [Number(r.cik), r.n])).toEqual(
        Object.keys(FILINGS)
          .map((c) => [Number(c), 1])
          .sort((a, b) => a[0]! - b[0]!),
      );
    } finally {
      await reader.close();
    }

    // The same night again: nothing requested, nothing published.
    const before = (await readCurrentManifest(dataDir, 'registry'))!.snapshot_id;
    const from2 = replay.hits.length;
    const second = await enqueueRun(config, 'registry', { inputDir });
    const plan2 = await waitForCompleted(
      getQueue(config, 'registry'),
      jobIdFor('registry', 'plan', second.runId),
      120_000,
      'the second plan job',
    );
    expect(plan2.returnvalue).toEqual({ skipped: true, plan_rejects: [] });
    expect(replay.hits.slice(from2)).toEqual([]);
    expect((await readCurrentManifest(dataDir, 'registry'))!.snapshot_id).toBe(before);
  });
});
