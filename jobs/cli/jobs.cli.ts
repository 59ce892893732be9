/**
 * `npm run jobs -- failed [--queue DOMAIN] [--limit N] | retry ID [--queue DOMAIN] | inspect ID [--queue DOMAIN]`
 *
 * Operator view of the BullMQ queues. `failed` lists failed jobs of every
 * queue (id, name, attempts, reason, and the kept input of a parse failure);
 * `inspect` prints a job's data, state, progress, attempts, failure, stack
 * traces and logs; `retry` moves a failed job back to waiting (a
 * whole failed run is re-run with `npm run ingest -- DOMAIN`). IDs are the deterministic job ids
 * (`registry:submissions:<run>:<key>`), found in every log line as `job_id`.
 */
import { parseArgs } from 'node:util';
import type { Job, Queue } from 'bullmq';
import { loadConfig } from '../../lib/config.ts';
import { allQueueNames, closeQueues, getQueue, QUEUE_PREFIX } from '../bullmq.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { queue: { type: 'string' }, limit: { type: 'string', default: '50' }, json: { type: 'boolean', default: false } },
});
const config = loadConfig(process.env);
if (!config.REDIS_URL) {
  console.error('npm run jobs needs REDIS_URL (jobs live in Redis).');
  process.exit(2);
}
const prefix = `${config.QUEUE_PREFIX ?? QUEUE_PREFIX}-`;
const queues: Queue[] = (values.queue ? [`${prefix}${values.queue.replace(prefix, '')}`] : allQueueNames(config)).map((n) =>
  getQueue(config, n.slice(prefix.length)),
);

async function findJob(id: string): Promise<Job | null> {
  // A job id starts with its domain; SEC-queue children live in the SEC queue.
  for (const q of queues) {
    const j = await q.getJob(id);
    if (j) return j;
  }
  return null;
}

function summary(j: Job) {
  return {
    id: j.id,
    queue: j.queueName,
    name: j.name,
    attempts: j.attemptsMade,
    failed_reason: j.failedReason,
    failed_at: j.finishedOn ? new Date(j.finishedOn).toISOString() : null,
    failure: (j.data as { failure?: unknown })?.failure ?? null,
  };
}

const [cmd = 'failed', id] = positionals;
let code = 0;
try {
  if (cmd === 'failed') {
    const rows = [];
    for (const q of queues) for (const j of await q.getFailed(0, Number(values.limit) - 1)) rows.push(summary(j));
    if (values.json) console.log(JSON.stringify(rows, null, 2));
    else if (rows.length === 0) console.log('no failed jobs');
    else
      for (const r of rows)
        console.log(
          `${r.id}\t${r.queue}\tattempts=${r.attempts}\t${r.failed_reason ?? ''}${(r.failure as { kept_copy?: string } | null)?.kept_copy ? `\tkept: ${(r.failure as { kept_copy: string }).kept_copy}` : ''}`,
        );
  } else if (cmd === 'inspect' || cmd === 'retry') {
    if (!id) throw new Error(`usage: npm run jobs -- ${cmd} ID`);
    const job = await findJob(id);
    if (!job) throw new Error(`no job ${id} in ${queues.map((q) => q.name).join(', ')}`);
    if (cmd === 'inspect') {
      const state = await job.getState();
      const logs = (await getQueue(config, job.queueName.slice(prefix.length)).getJobLogs(id)).logs;
      const deps = await job.getDependenciesCount().catch(() => null);
      console.log(
        JSON.stringify(
          {
            ...summary(job),
            state,
            progress: job.progress,
            data: job.data,
            return_value: job.returnvalue ?? null,
            opts: { attempts: job.opts.attempts, backoff: job.opts.backoff },
            parent: job.parentKey ?? null,
            dependencies: deps,
            stacktrace: job.stacktrace,
            logs,
            created_at: new Date(job.timestamp).toISOString(),
            processed_at: job.processedOn ? new Date(job.processedOn).toISOString() : null,
          },
          null,
          2,
        ),
      );
    } else {
      const state = await job.getState();
      if (state !== 'failed') throw new Error(`job ${id} is ${state}, not failed`);
      await job.retry('failed');
      console.log(`retrying ${id}`);
    }
  } else {
    throw new Error('usage: npm run jobs -- failed [--queue DOMAIN] | retry ID | inspect ID');
  }
} catch (e) {
  console.error((e as Error).message);
  code = 1;
}
await closeQueues();
process.exit(code);
