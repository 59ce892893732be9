/** `npm run worker`: starts BullMQ workers for every domain queue (needs REDIS_URL). SIGTERM lets running jobs finish. */
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { startWorkers } from './bullmq.ts';

const config = loadConfig(process.env);
if (!config.REDIS_URL) {
  console.error('npm run worker needs REDIS_URL (e.g. redis://127.0.0.1:6379). Without Redis, `npm start` and `npm run ingest` run jobs in process.');
  process.exit(2);
}
const log = createLogger(config.LOG_LEVEL, { role: 'worker', pid: process.pid });
const set = startWorkers(config, log, { concurrency: config.WORKER_CONCURRENCY });
log.info({ queues: set.workers.map((w) => w.name) }, 'workers started');
console.log(`worker ${process.pid} consuming ${set.workers.map((w) => w.name).join(', ')}`);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  log.info('closing workers (running jobs finish first)');
  await set.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
