/**
 * The BullMQ runner: the only module (with its siblings in jobs/) that imports
 * BullMQ. One queue per domain (`proofline-<domain>`); a run is
 *
 *   <domain>:plan    → computes the children and adds a flow:
 *   <domain>:publish   (parent, runs once after all children)
 *     └ <domain>:<step> × N  (children, spread over any number of workers)
 *
 * Job ids are deterministic (`registry:submissions:<run>:<key>`), so enqueuing
 * the same run twice collapses. Transient errors retry with exponential backoff
 * and jitter; parse and input errors throw UnrecoverableError (no retry). A
 * failed optional child is ignored by the parent (its failure is recorded as a
 * file-level reject); a failed required child fails the parent: nothing is
 * published.
 */
import { mkdir, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { FlowProducer, Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Config } from '../lib/config.ts';
import { classifyError, isTerminal } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { StagingRun } from '../lib/warehouse/staging.ts';
import { toPartKey } from '../lib/warehouse/layout.ts';
import { describeError } from './in-process.ts';
import { jobIdFor, jobName, newRunId } from './pipeline.ts';
import { pipelineFor, pipelines } from './pipelines.ts';
import { processPlan, processPublish, processStep, readOutcomes, type ChildOutcome } from './processors.ts';

export const QUEUE_PREFIX = 'proofline';
export const queueName = (domain: string) => `${QUEUE_PREFIX}-${domain}`;

/** Default retry policy of child jobs: 3 attempts, exponential backoff from 1 s with 50% jitter. */
export const CHILD_ATTEMPTS = 3;
const CHILD_BACKOFF = { type: 'exponential' as const, delay: 1000, jitter: 0.5 };

/** Connection options for BullMQ from REDIS_URL (workers need maxRetriesPerRequest: null). */
export function redisConnection(url: string): ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

const queues = new Map<string, Queue>();
let flowProducer: FlowProducer | null = null;

export function getQueue(config: Config, domain: string): Queue {
  const name = queueName(domain);
  let q = queues.get(name);
  if (!q) {
    q = new Queue(name, { connection: redisConnection(config.REDIS_URL!) });
    queues.set(name, q);
  }
  return q;
}

function getFlowProducer(config: Config): FlowProducer {
  flowProducer ??= new FlowProducer({ connection: redisConnection(config.REDIS_URL!) });
  return flowProducer;
}

export async function closeQueues(): Promise<void> {
  await Promise.all([...queues.values()].map((q) => q.close()));
  queues.clear();
  await flowProducer?.close();
  flowProducer = null;
}

export interface PlanJobData {
  runId: string;
  inputDir: string;
  force: boolean;
}
export interface StepJobData {
  runId: string;
  step: string;
  key: string;
  required: boolean;
  payload: unknown;
}
export interface PublishJobData {
  runId: string;
  inputDigest: string;
  planRejects: Array<{ file: string; reason: string }>;
}

/** Enqueues the plan job of a new run (or of `runId`, idempotently). */
export async function enqueueRun(config: Config, domain: string, opts: { inputDir?: string; force?: boolean; runId?: string } = {}): Promise<{ runId: string; jobId: string }> {
  pipelineFor(domain);
  const runId = opts.runId ?? newRunId(domain);
  const jobId = jobIdFor(domain, 'plan', runId);
  await getQueue(config, domain).add(jobName(domain, 'plan'), { runId, inputDir: opts.inputDir ?? config.inputDir, force: opts.force ?? false } satisfies PlanJobData, {
    jobId,
    attempts: CHILD_ATTEMPTS,
    backoff: CHILD_BACKOFF,
    removeOnComplete: { age: 7 * 86400 },
    removeOnFail: { age: 30 * 86400 },
  });
  return { runId, jobId };
}

async function recordOutcome(config: Config, domain: string, runId: string, outcome: ChildOutcome): Promise<void> {
  const run = await StagingRun.open(config.dataDir, pipelineFor(domain).domain, runId);
  const dir = path.join(run.dir, 'outcomes');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${toPartKey(`${outcome.step}-${outcome.key}`)}.json`);
  await writeFile(`${file}.tmp`, JSON.stringify(outcome));
  await rename(`${file}.tmp`, file);
}

/**
 * The processor of every proofline job, exported so tests can call it with a
 * job-like object. Maps errors: terminal kinds → UnrecoverableError.
 */
export async function processJob(job: Job, config: Config, log: Logger): Promise<unknown> {
  const [domain, stage] = job.name.split(':');
  const pipeline = pipelineFor(domain);
  const jobLog = log.child({ job_id: job.id, run_id: (job.data as { runId?: string }).runId, domain });
  try {
    if (stage === 'plan') {
      const data = job.data as PlanJobData;
      const plan = await processPlan(pipeline, { config, runId: data.runId, inputDir: data.inputDir, log: jobLog, force: data.force });
      if (!plan) return { skipped: true };
      await job.updateProgress(50);
      await getFlowProducer(config).add({
        name: jobName(domain, 'publish'),
        queueName: queueName(domain),
        data: { runId: data.runId, inputDigest: plan.inputDigest, planRejects: plan.rejects ?? [] } satisfies PublishJobData,
        opts: { jobId: jobIdFor(domain, 'publish', data.runId), attempts: CHILD_ATTEMPTS, backoff: CHILD_BACKOFF },
        children: plan.children.map((c) => ({
          name: jobName(domain, c.step),
          queueName: queueName(domain),
          data: { runId: data.runId, step: c.step, key: c.key, required: Boolean(c.required), payload: c.data } satisfies StepJobData,
          opts: {
            jobId: jobIdFor(domain, c.step, data.runId, toPartKey(c.key)),
            attempts: CHILD_ATTEMPTS,
            backoff: CHILD_BACKOFF,
            failParentOnFailure: Boolean(c.required),
            ignoreDependencyOnFailure: !c.required,
          },
        })),
      });
      return { children: plan.children.length };
    }
    if (stage === 'publish') {
      const data = job.data as PublishJobData;
      const run = await StagingRun.open(config.dataDir, pipeline.domain, data.runId);
      const outcomes = await readOutcomes(run);
      const published = await processPublish(pipeline, { config, runId: data.runId, log: jobLog, inputDigest: data.inputDigest, outcomes, planRejects: data.planRejects });
      return { snapshot_id: published.manifest.snapshot_id, tables: Object.keys(published.manifest.tables).length };
    }
    const data = job.data as StepJobData;
    try {
      const r = await processStep(pipeline, data.step, data.payload, {
        config,
        runId: data.runId,
        log: jobLog,
        attempt: job.attemptsMade + 1,
        progress: (d, t) => job.updateProgress(t ? Math.round((d / t) * 100) : d),
      });
      await recordOutcome(config, domain, data.runId, { step: data.step, key: data.key, status: 'completed', rows: r.rows, rejects: r.rejects, detail: r.detail });
      return r;
    } catch (err) {
      const last = isTerminal(err) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (last) await recordOutcome(config, domain, data.runId, { step: data.step, key: data.key, status: 'failed', rows: 0, rejects: 0, error: describeError(err), error_kind: classifyError(err) });
      throw err;
    }
  } catch (err) {
    jobLog.warn({ err, kind: classifyError(err) }, 'job failed');
    if (isTerminal(err)) throw new UnrecoverableError(describeError(err));
    throw err;
  }
}

export interface WorkerSet {
  workers: Worker[];
  close(): Promise<void>;
}

/** Starts one worker per domain queue in this process. `close()` lets running jobs finish. */
export function startWorkers(config: Config, log: Logger, opts: { concurrency?: number; domains?: string[] } = {}): WorkerSet {
  const domains = opts.domains ?? pipelines.map((p) => p.domain.domain);
  const workers = domains.map(
    (d) =>
      new Worker(queueName(d), (job) => processJob(job, config, log), {
        connection: redisConnection(config.REDIS_URL!),
        concurrency: opts.concurrency ?? 2,
        // A worker that dies mid-job stops renewing its lock; the job is then stalled and retried by another worker.
        lockDuration: 30_000,
        stalledInterval: 15_000,
        maxStalledCount: 2,
      }),
  );
  for (const w of workers) w.on('error', (err) => log.error({ err, queue: w.name }, 'worker error'));
  return {
    workers,
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await closeQueues();
    },
  };
}
