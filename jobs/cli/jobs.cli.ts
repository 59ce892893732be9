/**
 * `proofline jobs failed [--queue DOMAIN] [--limit N] [--json] | retry ID [--queue DOMAIN] | inspect ID [--queue DOMAIN]`
 * (alias `npm run jobs -- …`)
 *
 * Operator view of the BullMQ queues. `failed` lists failed jobs of every
 * queue (id, name, attempts, reason, and the kept input of a parse failure) and
 * exits 1 when there is any (0 when none), so a health check or cron can use it;
 * `inspect` prints a job's data, state, progress, attempts, failure, stack
 * traces and logs; `retry` moves a failed job back to waiting (a
 * whole failed run is re-run with `proofline ingest DOMAIN`). IDs are the deterministic job ids
 * (`registry:submissions:<run>:<key>`), found in every log line as `job_id`.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Job, Queue } from 'bullmq';
import { allQueueNames, closeQueues, getQueue, knownPipelines, QUEUE_PREFIX, registerExtraPipelines, SEC_QUEUE } from '../bullmq.ts';
import type { Pipeline } from '../pipeline.ts';
import { loadCliConfig, requireRedis, UsageError } from './cli-kit.ts';

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

export async function runJobs(
  cmd: 'failed' | 'inspect' | 'retry',
  args: { id?: string; queue?: string; limit?: number; json?: boolean; pipelinesModule?: string },
): Promise<number> {
  const config = loadCliConfig();
  if (args.pipelinesModule)
    registerExtraPipelines(((await import(pathToFileURL(path.resolve(args.pipelinesModule)).href)) as { pipelines: Pipeline[] }).pipelines);
  const prefix = `${config.QUEUE_PREFIX ?? QUEUE_PREFIX}-`;
  if (args.queue) {
    const known = [...knownPipelines().map((p) => p.domain.domain), SEC_QUEUE];
    const q = args.queue.replace(prefix, '');
    if (!known.includes(q)) throw new UsageError(`unknown queue ${args.queue}; known: ${known.join(', ')}`);
  }
  await requireRedis(config, 'proofline jobs (jobs live in Redis)');
  const queues: Queue[] = (args.queue ? [`${prefix}${args.queue.replace(prefix, '')}`] : allQueueNames(config)).map((n) =>
    getQueue(config, n.slice(prefix.length)),
  );
  const findJob = async (id: string): Promise<Job | null> => {
    for (const q of queues) {
      const j = await q.getJob(id);
      if (j) return j;
    }
    return null;
  };
  try {
    if (cmd === 'failed') {
      const rows = [];
      for (const q of queues) for (const j of await q.getFailed(0, (args.limit ?? 50) - 1)) rows.push(summary(j));
      if (args.json) console.log(JSON.stringify(rows, null, 2));
      else if (rows.length === 0) console.log('no failed jobs');
      else
        for (const r of rows)
          console.log(
            `${r.id}\t${r.queue}\tattempts=${r.attempts}\t${r.failed_reason ?? ''}${(r.failure as { kept_copy?: string } | null)?.kept_copy ? `\tkept: ${(r.failure as { kept_copy: string }).kept_copy}` : ''}`,
          );
      return rows.length ? 1 : 0;
    }
    const id = args.id!;
    const found = await findJob(id);
    if (!found) throw new Error(`no job ${id} in ${queues.map((q) => q.name).join(', ')}`);
    if (cmd === 'inspect') {
      const state = await found.getState();
      // Read again after the state: a job read while active that completed since still holds no return value.
      const job = (await findJob(id)) ?? found;
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
      return 0;
    }
    const state = await found.getState();
    if (state !== 'failed') throw new Error(`job ${id} is ${state}, not failed`);
    await found.retry('failed');
    console.log(`retrying ${id}`);
    return 0;
  } finally {
    await closeQueues();
  }
}
