/**
 * `npm run worker [-- --no-schedules] [--concurrency N] [--domains a,b]`
 *
 * Starts BullMQ workers for every domain queue and the SEC queue (needs
 * REDIS_URL). Run any number of these, on one or several machines sharing
 * Redis and DATA_DIR: each job goes to exactly one worker. On start it applies
 * the configured schedules (idempotent; `--no-schedules` skips). SIGTERM/SIGINT
 * let running jobs finish (`worker.close()`), then exit; a second signal, or
 * WORKER_SHUTDOWN_MS (default 5 min) passing, exits at once and the unfinished
 * jobs are retried by another worker once their locks expire.
 *
 * `--pipelines-module FILE` loads extra pipelines (a module exporting
 * `pipelines: Pipeline[]`); the integration tests use it for their test pipeline.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { closePolygonLimiter } from '../quotes/quotes-fetch.ts';
import { registerExtraPipelines, startWorkers } from '../bullmq.ts';
import type { Pipeline } from '../pipeline.ts';
import { applySchedules } from '../schedules.ts';

const { values } = parseArgs({
  options: {
    'no-schedules': { type: 'boolean', default: false },
    concurrency: { type: 'string' },
    domains: { type: 'string' },
    'pipelines-module': { type: 'string' },
  },
});
const config = loadConfig(process.env);
if (!config.REDIS_URL) {
  console.error(
    'npm run worker needs REDIS_URL (e.g. redis://127.0.0.1:6379). Without Redis, `npm start` and `npm run ingest` run jobs in process.',
  );
  process.exit(2);
}
const log = createLogger(config.LOG_LEVEL, { role: 'worker', pid: process.pid });
if (values['pipelines-module']) {
  const mod = (await import(pathToFileURL(path.resolve(values['pipelines-module'])).href)) as { pipelines: Pipeline[] };
  registerExtraPipelines(mod.pipelines);
}
if (!values['no-schedules']) {
  const applied = await applySchedules(config);
  log.info({ schedules: applied }, 'schedules applied');
}
const set = startWorkers(config, log, {
  concurrency: values.concurrency ? Number(values.concurrency) : config.WORKER_CONCURRENCY,
  domains: values.domains
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
