/**
 * `proofline worker [--no-schedules] [--concurrency N] [--domains a,b]` (alias `npm run worker -- …`)
 *
 * Starts BullMQ workers for every domain queue and the SEC queue (needs
 * REDIS_URL). Run any number of these, on one or several machines sharing
 * Redis and DATA_DIR: each job goes to exactly one worker. On start it applies
 * the configured schedules (idempotent; `--no-schedules` skips). SIGTERM/SIGINT
 * let running jobs finish (`worker.close()`), then exit 0; a second signal, or
 * WORKER_SHUTDOWN_MS (default 5 min) passing, exits 1 at once and the unfinished
 * jobs are retried by another worker once their locks expire.
 *
 * `--pipelines-module FILE` (or WORKER_PIPELINES_MODULE) loads extra pipelines (a module exporting
 * `pipelines: Pipeline[]`); the integration tests use it for their test pipeline.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { registerExtraPipelines, startWorkers } from '../bullmq.ts';
import type { Pipeline } from '../pipeline.ts';
import { closePolygonLimiter } from '../quotes/quotes-fetch.ts';
import { applySchedules } from '../schedules.ts';
import { loadCliConfig, requireRedis } from './cli-kit.ts';

export interface WorkerOptions {
  schedules?: boolean;
  concurrency?: number;
  domains?: string;
  pipelinesModule?: string;
}

/** Runs the workers until SIGTERM/SIGINT; never resolves (the signal handler exits the process). */
export async function runWorker(opts: WorkerOptions): Promise<number> {
  const config = loadCliConfig();
  await requireRedis(config, 'proofline worker');
  const log = createLogger(config.LOG_LEVEL, { role: 'worker', pid: process.pid });
  const extra = opts.pipelinesModule ?? config.WORKER_PIPELINES_MODULE;
  if (extra) {
    const mod = (await import(pathToFileURL(path.resolve(extra)).href)) as { pipelines: Pipeline[] };
    registerExtraPipelines(mod.pipelines);
  }
  if (opts.schedules !== false) {
    const applied = await applySchedules(config);
    log.info({ schedules: applied }, 'schedules applied');
  }
  const set = startWorkers(config, log, {
    concurrency: opts.concurrency ?? config.WORKER_CONCURRENCY,
    domains: opts.domains
      ?.split(',')
      .map((d) => d.trim())
      .filter(Boolean),
  });
  await Promise.all(set.workers.map((w) => w.waitUntilReady()));
  log.info({ queues: set.workers.map((w) => w.name) }, 'workers started');
  console.log(`worker ${process.pid} consuming ${set.workers.map((w) => w.name).join(', ')}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now; unfinished jobs are retried elsewhere after their locks expire');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'closing workers (running jobs finish first)');
    const limit = setTimeout(
      () => {
        log.warn('shutdown timeout: exiting with jobs still running; they will be retried');
        process.exit(1);
      },
      Number(process.env.WORKER_SHUTDOWN_MS ?? 300_000),
    );
    limit.unref();
    await set.close();
    await closeSecLimiter();
    await closePolygonLimiter();
    log.info('workers closed');
    log.flush?.();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return new Promise<number>(() => undefined);
}
