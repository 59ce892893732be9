/**
 * The BullMQ runner: the only module (with its siblings in jobs/) that imports
 * BullMQ. One queue per domain (`<QUEUE_PREFIX>-<domain>`) plus one SEC queue
 * (`<QUEUE_PREFIX>-sec`) for steps that read EDGAR live (`rateLimited: 'sec'`).
 * A run is
 *
 *   <domain>:trigger  (optional; made by a job scheduler, jobs/schedules.ts) → enqueues a plan job for a fresh run
 *   <domain>:plan     → plans the fetch jobs (Pipeline.fetch, when a remote source is configured),
 *                       scans the inputs, computes the children and adds a nested flow:
 *   <domain>:publish    (parent: derive + publish, runs once after all children)
 *     └ <domain>:<step> × N  (children: parse+load, one per file or CIK batch, spread over every worker)
 *         └ <domain>:fetch × M  (grandchildren: download that child's input files, e.g. one CIK batch;
 *                                on the SEC queue for EDGAR; a failed one fails its parse child)
 *
 * Job ids are deterministic (`registry:submissions:<run>:<key>`), so enqueuing
 * the same run twice collapses and no child runs twice (a worker killed
 * mid-job loses its lock; the stalled job is then retried by another worker,
 * and its parts are overwritten because part keys are deterministic too).
 * Transient errors retry with exponential backoff and jitter; parse and input
 * errors throw UnrecoverableError (no retry) and the job keeps the rejected
 * input for inspection (`failure` in its data, a copy under
 * DATA_DIR/rejected/). A failed optional child is ignored by the parent
 * (`ignoreDependencyOnFailure`) and recorded as a file-level reject; a failed
 * required child fails the parent: nothing is published. Publish reads the
 * children's outcomes from BullMQ (return values and ignored failures) and
 * holds a Redis lock per domain, so one publisher holds across machines.
 */
import { copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { FlowProducer, Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Config } from '../lib/config.ts';
import { classifyError, isTerminal, SourceUnavailableError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { getSecLimiter } from '../lib/sec-limiter.ts';
import { StagingRun } from '../lib/warehouse/staging.ts';
import { toPartKey } from '../lib/warehouse/layout.ts';
import { describeError } from './in-process.ts';
import { jobIdFor, jobName, type Pipeline } from './pipeline.ts';
import { pipelineFor, pipelines } from './pipelines.ts';
import { planRun, processPublish, processStep, readOutcomes, type ChildOutcome } from './processors.ts';
import { notifyRun } from './run-notify.ts';
import { acquireRedisLock } from './redis-lock.ts';
import { QUEUE_PREFIX, queueName, queueNamesOf, redisConnection, SEC_QUEUE } from '../lib/queues.ts';

export { QUEUE_PREFIX, queueName, redisConnection, SEC_QUEUE };

/** Default retry policy of child jobs: 3 attempts, exponential backoff from 1 s with 50% jitter. */
export const CHILD_ATTEMPTS = 3;
const CHILD_BACKOFF = { type: 'exponential' as const, delay: 1000, jitter: 0.5 };
const KEEP = { removeOnComplete: { age: 7 * 86400 }, removeOnFail: { age: 30 * 86400 } };

// ---- pipelines known to this process --------------------------------------

const extraPipelines = new Map<string, Pipeline>();

/**
 * Adds pipelines beyond jobs/pipelines.ts to this process (worker.cli.ts
 * `--pipelines-module`, used by the integration tests' test pipeline).
 */
export function registerExtraPipelines(list: Pipeline[]): void {
  for (const p of list) extraPipelines.set(p.domain.domain, p);
}

/** The pipeline of a domain: registered (jobs/pipelines.ts) or extra. */
export function resolvePipeline(domain: string): Pipeline {
  return extraPipelines.get(domain) ?? pipelineFor(domain);
}

/** Every pipeline this process knows. */
export function knownPipelines(): Pipeline[] {
  return [...pipelines.filter((p) => !extraPipelines.has(p.domain.domain)), ...extraPipelines.values()];
}

// ---- connections ----------------------------------------------------------

const queues = new Map<string, Queue>();
const flowProducers = new Map<string, FlowProducer>();
const redisClients = new Map<string, Redis>();

function requireRedis(config: Config): string {
  if (!config.REDIS_URL) throw new Error('REDIS_URL is not configured');
  return config.REDIS_URL;
}

/** The (cached) queue of a domain, or of the SEC queue with `SEC_QUEUE`. */
export function getQueue(config: Config, domain: string): Queue {
  const url = requireRedis(config);
  const name = queueName(domain, config.QUEUE_PREFIX);
  const k = `${url}|${name}`;
  let q = queues.get(k);
  if (!q) {
    q = new Queue(name, { connection: redisConnection(url) });
    queues.set(k, q);
  }
  return q;
}

function getFlowProducer(config: Config): FlowProducer {
  const url = requireRedis(config);
  let f = flowProducers.get(url);
  if (!f) {
    f = new FlowProducer({ connection: redisConnection(url) });
    flowProducers.set(url, f);
  }
  return f;
}

/** A plain ioredis client (locks, schedule overrides); cached per URL, closed by closeQueues. */
export function getRedis(config: Config): Redis {
  const url = requireRedis(config);
  let r = redisClients.get(url);
  if (!r) {
    r = new Redis(url, { maxRetriesPerRequest: 3 });
    redisClients.set(url, r);
  }
  return r;
}

/** Every queue name of this deployment: one per known domain plus the SEC queue. */
export function allQueueNames(config: Pick<Config, 'QUEUE_PREFIX'>): string[] {
  return queueNamesOf(
    knownPipelines().map((p) => p.domain.domain),
    config.QUEUE_PREFIX,
  );
}

export async function closeQueues(): Promise<void> {
  await Promise.all([...queues.values()].map((q) => q.close()));
  queues.clear();
  await Promise.all([...flowProducers.values()].map((f) => f.close()));
  flowProducers.clear();
  await Promise.all([...redisClients.values()].map((r) => r.quit().catch(() => undefined)));
  redisClients.clear();
}

// ---- job data -------------------------------------------------------------

export interface TriggerJobData {
  domain: string;
  force?: boolean;
  inputDir?: string;
  /** Scheduled runs fetch from the configured remote source (default true). */
  fetch?: boolean;
}
export interface PlanJobData {
  runId: string;
  inputDir: string;
  force: boolean;
  /** Parse every input, reusing none from the current snapshot (`npm run ingest -- --full`). */
  full?: boolean;
  /** Plan fetch jobs when a remote source is configured (default true; `npm run ingest -- --no-fetch` sets false). */
  fetch?: boolean;
}
export interface StepJobData {
  runId: string;
  step: string;
  key: string;
  required: boolean;
  payload: unknown;
  /** Set when the step failed terminally: what to inspect (`npm run jobs -- inspect ID`). */
  failure?: JobFailure;
}
export interface PublishJobData {
  runId: string;
  inputDigest: string;
  planRejects: Array<{ file: string; reason: string }>;
  /** Facts for the snapshot's meta from the plan (e.g. the EDGAR daily-index cursor). */
  planMeta?: Record<string, unknown>;
  /** Set when the run fetched: publish digests the inputs again, as fetched (see processPublish). */
  inputDir?: string;
}
export interface JobFailure {
  kind: string;
  error: string;
  /** The offending input file, as the parser named it. */
  file?: string;
  line?: number;
  position?: number;
  /** A copy of the offending file under DATA_DIR/rejected/<domain>/<run>/, kept for inspection. */
  kept_copy?: string;
  at: string;
}

/** Enqueues the plan job of a new run (or of `runId`, idempotently). */
export async function enqueueRun(
  config: Config,
  domain: string,
  opts: { inputDir?: string; force?: boolean; runId?: string; fetch?: boolean; full?: boolean } = {},
): Promise<{ runId: string; jobId: string }> {
  resolvePipeline(domain);
  const runId = opts.runId ?? newRunIdFor(domain);
  const jobId = jobIdFor(domain, 'plan', runId);
  await getQueue(config, domain).add(
    jobName(domain, 'plan'),
    {
      runId,
      inputDir: opts.inputDir ?? config.inputDir,
      force: opts.force ?? false,
      fetch: opts.fetch ?? true,
      ...(opts.full ? { full: true } : {}),
    } satisfies PlanJobData,
    {
      jobId,
      attempts: CHILD_ATTEMPTS,
      backoff: CHILD_BACKOFF,
      ...KEEP,
    },
  );
  return { runId, jobId };
}

/** How an enqueued run ended (`proofline ingest --wait`). */
export interface RunOutcome {
  status: 'published' | 'skipped' | 'failed';
  snapshot_id?: string;
  failed_children?: Array<{ step: string; key: string; error?: string }>;
  /** The stage that failed and BullMQ's failed reason. */
  stage?: 'plan' | 'publish';
  reason?: string;
}

/**
 * Waits for the run `runId` of `domain` to end: its plan job, then (unless the plan skipped the run because its
 * inputs were unchanged) its publish job, through BullMQ's queue events. A required child failing for good fails
 * the publish job (failParentOnFailure), so the publish job's end is the run's end.
 */
export async function waitForRun(config: Config, domain: string, runId: string): Promise<RunOutcome> {
  const queue = getQueue(config, domain);
  const events = new QueueEvents(queue.name, { connection: redisConnection(requireRedis(config)) });
  try {
    await events.waitUntilReady();
    const waitFor = async (stage: 'plan' | 'publish') => {
      const job = await Job.fromId(queue, jobIdFor(domain, stage, runId));
      if (!job) return { error: `${stage} job ${jobIdFor(domain, stage, runId)} not found` };
      try {
        return { value: (await job.waitUntilFinished(events)) as Record<string, unknown> | null };
      } catch (e) {
        return { error: (e as Error).message };
      }
    };
    const plan = await waitFor('plan');
    if ('error' in plan) return { status: 'failed', stage: 'plan', reason: plan.error };
    if (plan.value?.skipped) return { status: 'skipped' };
    const publish = await waitFor('publish');
    if ('error' in publish) return { status: 'failed', stage: 'publish', reason: publish.error };
    return {
      status: 'published',
      snapshot_id: publish.value?.snapshot_id as string,
      failed_children: (publish.value?.failed_children ?? []) as RunOutcome['failed_children'],
    };
  } finally {
    await events.close();
  }
}

function compactTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, '').slice(0, 15);
}

function newRunIdFor(domain: string): string {
  return `${domain}-${compactTime(Date.now())}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Run id of a scheduled trigger: derived from the trigger job, so a retried trigger enqueues the same run. */
export function runIdForTrigger(domain: string, job: { id?: string; timestamp: number }): string {
  const suffix = Buffer.from(String(job.id ?? job.timestamp))
    .toString('base64url')
    .replace(/[^a-zA-Z0-9]/g, '')
    .slice(-8)
    .toLowerCase();
  return `${domain}-${compactTime(job.timestamp)}-${suffix}`;
}

// ---- processing -----------------------------------------------------------

async function recordOutcome(config: Config, pipeline: Pipeline, runId: string, outcome: ChildOutcome): Promise<void> {
  const run = await StagingRun.open(config.dataDir, pipeline.domain, runId);
  const dir = path.join(run.dir, 'outcomes');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${toPartKey(`${outcome.step}-${outcome.key}`)}.json`);
  await writeFile(`${file}.tmp`, JSON.stringify(outcome));
  await rename(`${file}.tmp`, file);
}

/** Keeps the input a terminal error names (ParseError `file`) under DATA_DIR/rejected/ and describes the failure. */
async function keepRejectedInput(config: Config, domain: string, runId: string, err: unknown): Promise<JobFailure> {
  const ctx = ((err as { context?: Record<string, unknown> })?.context ?? {}) as Record<string, unknown>;
  const failure: JobFailure = { kind: classifyError(err), error: describeError(err), at: new Date().toISOString() };
  if (typeof ctx.file === 'string') failure.file = ctx.file;
  if (typeof ctx.line === 'number') failure.line = ctx.line;
  if (typeof ctx.position === 'number') failure.position = ctx.position;
  if (failure.file && path.isAbsolute(failure.file)) {
    const dest = path.join(config.dataDir, 'rejected', domain, runId, path.basename(failure.file));
    try {
      await mkdir(path.dirname(dest), { recursive: true });
      await copyFile(failure.file, dest);
      failure.kept_copy = dest;
    } catch {
      // The file may be gone (or was a URL); its path is still in the failure.
    }
  }
  return failure;
}

/** Outcomes of a publish job's children: return values (completed), ignored failures, and outcome files (failure detail). */
async function collectOutcomes(job: Job, run: StagingRun, runId: string): Promise<ChildOutcome[]> {
  const byKey = new Map<string, ChildOutcome>();
  const id = (step: string, key: string) => `${step}|${toPartKey(key)}`;
  for (const o of await readOutcomes(run)) byKey.set(id(o.step, o.key), o);
  const values = await job.getChildrenValues<ChildOutcome>();
  for (const v of Object.values(values)) if (v && typeof v === 'object' && 'step' in v) byKey.set(id(v.step, v.key), v);
  const ignored = await job.getIgnoredChildrenFailures();
  for (const [jobKey, reason] of Object.entries(ignored)) {
    // jobKey = <bull prefix>:<queue>:<domain>:<step>:<run>~<partKey> (job ids from jobIdFor).
    const at = jobKey.indexOf(`:${runId}~`);
    if (at < 0) continue;
    const step = jobKey.slice(0, at).split(':').pop()!;
    const key = jobKey.slice(at + runId.length + 2);
    const prev = byKey.get(id(step, key));
    if (prev?.status !== 'failed')
      byKey.set(id(step, key), {
        step,
        key,
        status: 'failed',
        rows: 0,
        rejects: 0,
        error: reason,
        error_kind: prev?.error_kind ?? 'unexpected',
      });
  }
  return [...byKey.values()].sort((a, b) => `${a.step}|${a.key}`.localeCompare(`${b.step}|${b.key}`));
}

export interface ProcessHooks {
  /** Called when the SEC answered with its rate-limit page: pause the SEC queue. */
  onSecRateLimited?(ms: number): Promise<void>;
}

/**
 * The processor of every proofline job, exported so tests can call it with a
 * job-like object. Maps errors: terminal kinds → UnrecoverableError.
 */
export async function processJob(job: Job, config: Config, log: Logger, hooks: ProcessHooks = {}): Promise<unknown> {
  const [domain, stage] = job.name.split(':');
  const pipeline = resolvePipeline(domain);
  const jobLog = log.child({
    job_id: job.id,
    run_id: (job.data as { runId?: string }).runId,
    domain,
    stage,
    attempt: job.attemptsMade + 1,
  });
  try {
    if (stage === 'trigger') {
      const data = job.data as TriggerJobData;
      const runId = runIdForTrigger(domain, job);
      const r = await enqueueRun(config, domain, { runId, force: data.force, inputDir: data.inputDir, fetch: data.fetch ?? true });
      jobLog.info({ run_id: runId, plan_job_id: r.jobId }, 'scheduled run enqueued');
      return r;
    }
    if (stage === 'plan') {
      const data = job.data as PlanJobData;
      const { plan, skipped } = await planRun(pipeline, {
        config,
        runId: data.runId,
        inputDir: data.inputDir,
        log: jobLog,
        force: data.force,
        fetch: data.fetch,
        full: data.full,
      });
      if (skipped) return { skipped: true, plan_rejects: plan.rejects ?? [] };
      await job.updateProgress(50);
      const stepQueue = (step: string) => queueName(pipeline.steps[step]?.rateLimited === 'sec' ? SEC_QUEUE : domain, config.QUEUE_PREFIX);
      const fetchByKey = new Map((plan.fetches ?? []).map((f) => [f.key, f]));
      const claimed = new Set(plan.children.flatMap((c) => c.after ?? []));
      // A fetch job is a child of the parse job that reads its files: that parse job runs only after it,
      // and fails (failParentOnFailure) when the fetch failed for good; then the parse job's own
      // required/optional rule decides for publish. A fetch job no parse job reads hangs under publish.
      const fetchNode = (key: string, underPublish: boolean) => {
        const f = fetchByKey.get(key)!;
        return {
          name: jobName(domain, f.step),
          queueName: stepQueue(f.step),
          data: { runId: data.runId, step: f.step, key: f.key, required: false, payload: f.data } satisfies StepJobData,
          opts: {
            jobId: jobIdFor(domain, f.step, data.runId, toPartKey(f.key)),
            attempts: CHILD_ATTEMPTS,
            backoff: CHILD_BACKOFF,
            failParentOnFailure: !underPublish,
            ignoreDependencyOnFailure: underPublish,
            ...KEEP,
          },
        };
      };
      await getFlowProducer(config).add({
        name: jobName(domain, 'publish'),
        queueName: queueName(domain, config.QUEUE_PREFIX),
        data: {
          runId: data.runId,
          inputDigest: plan.inputDigest,
          planRejects: plan.rejects ?? [],
          planMeta: plan.meta,
          inputDir: plan.fetches?.length ? data.inputDir : undefined,
        } satisfies PublishJobData,
        opts: { jobId: jobIdFor(domain, 'publish', data.runId), attempts: CHILD_ATTEMPTS, backoff: CHILD_BACKOFF, ...KEEP },
        children: [
          ...plan.children.map((c) => ({
            name: jobName(domain, c.step),
            // Steps that read the SEC live go to the SEC queue (limited and paused as one).
            queueName: stepQueue(c.step),
            data: { runId: data.runId, step: c.step, key: c.key, required: Boolean(c.required), payload: c.data } satisfies StepJobData,
            opts: {
              jobId: jobIdFor(domain, c.step, data.runId, toPartKey(c.key)),
              attempts: CHILD_ATTEMPTS,
              backoff: CHILD_BACKOFF,
              failParentOnFailure: Boolean(c.required),
              ignoreDependencyOnFailure: !c.required,
              ...KEEP,
            },
            children: c.after?.length ? c.after.map((k) => fetchNode(k, false)) : undefined,
          })),
          ...[...fetchByKey.keys()].filter((k) => !claimed.has(k)).map((k) => fetchNode(k, true)),
        ],
      });
      jobLog.info({ children: plan.children.length, fetch_jobs: plan.fetches?.length ?? 0 }, 'flow added');
      // Incremental counts (inputs parsed, reused, removed) show in `npm run jobs -- inspect <plan job>`.
      return { children: plan.children.length, fetch_jobs: plan.fetches?.length ?? 0, incremental: plan.meta?.incremental ?? null };
    }
    if (stage === 'publish') {
      const data = job.data as PublishJobData;
      const run = await StagingRun.open(config.dataDir, pipeline.domain, data.runId);
      const outcomes = await collectOutcomes(job, run, data.runId);
      // One publisher per domain across machines (the file lock inside publishRun is host-local).
      const lock = await acquireRedisLock(getRedis(config), `${config.QUEUE_PREFIX}:lock:publish:${domain}`, {
        ttlMs: 60_000,
        waitMs: 60_000,
        owner: `${process.pid}`,
      });
      try {
        const published = await processPublish(pipeline, {
          config,
          runId: data.runId,
          log: jobLog,
          inputDigest: data.inputDigest,
          outcomes,
          planRejects: data.planRejects,
          planMeta: data.planMeta,
          refreshDigest: data.inputDir ? { inputDir: data.inputDir } : undefined,
        });
        jobLog.info(
          {
            snapshot_id: published.manifest.snapshot_id,
            children: outcomes.length,
            failed_children: outcomes.filter((o) => o.status === 'failed').length,
          },
          'published',
        );
        await notifyRun(config.dataDir, jobLog, {
          type: 'run.published',
          domain,
          runId: data.runId,
          snapshotId: published.manifest.snapshot_id,
          outcomes,
          planRejects: data.planRejects.length,
        });
        return {
          snapshot_id: published.manifest.snapshot_id,
          tables: Object.keys(published.manifest.tables).length,
          children: outcomes.length,
          incremental: published.manifest.meta.incremental ?? null,
          failed_children: outcomes.filter((o) => o.status === 'failed').map((o) => ({ step: o.step, key: o.key, error: o.error })),
        };
      } finally {
        await lock.release();
      }
    }
    const data = job.data as StepJobData;
    try {
      const r = await processStep(pipeline, data.step, data.payload, {
        config,
        runId: data.runId,
        log: jobLog,
        attempt: job.attemptsMade + 1,
        runner: 'bullmq',
        progress: (d, t) => job.updateProgress(t ? Math.round((d / t) * 100) : d),
      });
      const outcome: ChildOutcome = {
        step: data.step,
        key: data.key,
        status: 'completed',
        rows: r.rows,
        rejects: r.rejects,
        detail: r.detail,
      };
      await recordOutcome(config, pipeline, data.runId, outcome);
      return outcome;
    } catch (err) {
      if (err instanceof SourceUnavailableError && err.context.status === 403 && pipeline.steps[data.step]?.rateLimited === 'sec') {
        const paused = await getSecLimiter(config).pausedFor();
        if (paused > 0 && hooks.onSecRateLimited) {
          jobLog.warn({ pause_ms: paused }, 'SEC rate-limit page: pausing the SEC queue and handing the job back');
          await hooks.onSecRateLimited(Math.max(paused, 1000));
          throw Worker.RateLimitError();
        }
      }
      const terminal = isTerminal(err);
      const last = terminal || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (terminal) {
        const failure = await keepRejectedInput(config, domain, data.runId, err);
        await job.updateData({ ...data, failure });
      }
      if (last) {
        const failed: ChildOutcome = {
          step: data.step,
          key: data.key,
          status: 'failed',
          rows: 0,
          rejects: 0,
          error: describeError(err),
          error_kind: classifyError(err),
        };
        await recordOutcome(config, pipeline, data.runId, failed);
        // A required child failing for good fails its parent (failParentOnFailure): the run publishes nothing.
        if (data.required)
          await notifyRun(config.dataDir, jobLog, {
            type: 'run.failed',
            domain,
            runId: data.runId,
            snapshotId: null,
            outcomes: [failed],
            error: `required input ${data.key}: ${failed.error}`,
          });
      }
      throw err;
    }
  } catch (err) {
    if ((err as Error)?.name === 'RateLimitError') throw err;
    jobLog.warn({ err, kind: classifyError(err) }, 'job failed');
    if (isTerminal(err)) throw new UnrecoverableError(describeError(err));
    throw err;
  }
}

export interface WorkerSet {
  workers: Worker[];
  close(): Promise<void>;
}

/**
 * Starts one worker per domain queue (and one for the SEC queue) in this
 * process. Any number of processes may do this on any machines sharing Redis
 * and DATA_DIR: BullMQ hands each job to exactly one worker at a time.
 * `close()` lets running jobs finish (SIGTERM); a killed worker's jobs stall
 * (no lock renewal for JOB_LOCK_MS) and are retried by another worker.
 */
export function startWorkers(config: Config, log: Logger, opts: { concurrency?: number; domains?: string[] } = {}): WorkerSet {
  const url = requireRedis(config);
  const domains = opts.domains ?? knownPipelines().map((p) => p.domain.domain);
  const common = {
    connection: redisConnection(url),
    // Stored on every job it runs (`processedBy`): which host and process ran a job, in the dashboard and `jobs inspect`.
    name: `${hostname()}:${process.pid}`,
    concurrency: opts.concurrency ?? config.WORKER_CONCURRENCY,
    // A worker that dies mid-job stops renewing its lock; after lockDuration the job is stalled and
    // (checked every stalledInterval) moved back to wait for another worker, up to maxStalledCount times.
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_STALLED_INTERVAL_MS,
    maxStalledCount: config.JOB_MAX_STALLED,
  };
  const secQueue = getQueue(config, SEC_QUEUE);
  const hooks: ProcessHooks = { onSecRateLimited: (ms) => secQueue.rateLimit(ms) };
  const workers = domains.map((d) => new Worker(queueName(d, config.QUEUE_PREFIX), (job) => processJob(job, config, log, hooks), common));
  // SEC fair access: the queue limiter caps SEC jobs started per second; the Redis limiter
  // (lib/sec-limiter.ts) caps the requests themselves, across every process.
  workers.push(
    new Worker(queueName(SEC_QUEUE, config.QUEUE_PREFIX), (job) => processJob(job, config, log, hooks), {
      ...common,
      limiter: { max: config.SEC_RATE_LIMIT, duration: 1000 },
    }),
  );
  for (const w of workers) {
    w.on('error', (err) => log.error({ err, queue: w.name }, 'worker error'));
    w.on('stalled', (jobId) =>
      log.warn({ job_id: jobId, queue: w.name }, 'job stalled: its worker stopped renewing the lock; retrying elsewhere'),
    );
  }
  return {
    workers,
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await closeQueues();
    },
  };
}
