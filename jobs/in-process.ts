/**
 * The in-process runner: runs a pipeline's plan, children and publish in this
 * process, with the same processors the BullMQ workers use. Used by `npm start`,
 * `npm run ingest` without REDIS_URL, and tests.
 *
 * Retries: transient errors (SourceUnavailableError, unexpected errors) are
 * retried with exponential backoff and jitter; parse, not-found and invalid
 * input errors are terminal at once. A failed optional child becomes a
 * file-level reject and the rest publishes; a failed required child fails the
 * run and nothing is published.
 *
 * Fetch jobs (Plan.fetches) run first, each retried alone; a child waits for
 * the fetch jobs it names in `after` and fails without running when one of
 * them failed (as in BullMQ, where they are its children with
 * failParentOnFailure). Fetch jobs no child names are waited for by publish
 * and, when they fail, become file-level rejects.
 */
import type { Config } from '../lib/config.ts';
import { classifyError, isTerminal, ParseError, PipelineError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { StagingRun } from '../lib/warehouse/staging.ts';
import { clearStagingOwner, markStagingOwner } from '../lib/warehouse/snapshot.ts';
import { newRunId, type Pipeline } from './pipeline.ts';
import { planRun, processPublish, processStep, type ChildOutcome, type RunReport } from './processors.ts';
import type { ProgressEvent } from './progress.ts';
import { notifyRun } from './run-notify.ts';

export interface InProcessOptions {
  config: Config;
  log: Logger;
  inputDir?: string;
  runId?: string;
  force?: boolean;
  /** Parse every input, reusing none from the current snapshot (an incremental pipeline's full run). */
  full?: boolean;
  attempts?: number;
  backoffMs?: number;
  concurrency?: number;
  /** Plan fetch jobs when the pipeline has a remote source configured (default true). */
  fetch?: boolean;
  onProgress?: (e: ProgressEvent) => void;
}

export class RunFailedError extends PipelineError {
  override readonly code = 'proofline:run-failed';
}

/** Exponential backoff with full jitter: attempt 1 waits up to base, attempt n up to base*2^(n-1). */
export function backoffDelay(attempt: number, baseMs: number): number {
  return Math.round(Math.random() * baseMs * 2 ** (attempt - 1));
}

export async function runPipelineInProcess(pipeline: Pipeline, opts: InProcessOptions): Promise<RunReport> {
  const started = Date.now();
  const domain = pipeline.domain.domain;
  const runId = opts.runId ?? newRunId(domain);
  const log = opts.log.child({ run_id: runId, domain });
  const inputDir = opts.inputDir ?? opts.config.inputDir;
  // This process owns the run's staging folder: if it is killed, the next run removes the folder at once.
  await markStagingOwner(opts.config.dataDir, domain, runId);
  try {
    return await runInProcess(pipeline, opts, { started, domain, runId, log, inputDir });
  } finally {
    await clearStagingOwner(opts.config.dataDir, domain, runId).catch(() => undefined);
  }
}

async function runInProcess(
  pipeline: Pipeline,
  opts: InProcessOptions,
  r: { started: number; domain: string; runId: string; log: Logger; inputDir: string },
): Promise<RunReport> {
  const { started, domain, runId, log, inputDir } = r;
  const planned = await planRun(pipeline, {
    config: opts.config,
    runId,
    inputDir,
    log,
    force: opts.force,
    fetch: opts.fetch,
    full: opts.full,
  });
  const plan = planned.plan;
  if (planned.skipped) {
    const planRejects = plan.rejects ?? [];
    return {
      domain,
      run_id: runId,
      skipped: true,
      snapshot_id: null,
      rows: 0,
      rejects: planRejects.length,
      failed_children: 0,
      children: [],
      plan_rejects: planRejects,
      duration_ms: Date.now() - started,
    };
  }
  const attempts = opts.attempts ?? 3;
  const fetches = plan.fetches ?? [];
  const total = plan.children.length + fetches.length;
  let done = 0;
  opts.onProgress?.({ domain, stage: 'ingest', done, total });
  const outcomes: ChildOutcome[] = [];
  const fetchOutcomes = new Map<string, ChildOutcome>();

  /** Runs one job with retries (transient errors back off; terminal ones fail at once). */
  const runJob = async (job: { step: string; key: string; data: unknown }): Promise<ChildOutcome> => {
    const jobLog = log.child({ job_id: `${domain}:${job.step}:${job.key}` });
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await processStep(pipeline, job.step, job.data, {
          config: opts.config,
          runId,
          log: jobLog,
          attempt,
          runner: 'in-process',
          progress: (d, t) => opts.onProgress?.({ domain, stage: job.step, done: d, total: t ?? 100, label: job.key }),
        });
        return { step: job.step, key: job.key, status: 'completed', rows: r.rows, rejects: r.rejects, detail: r.detail };
      } catch (err) {
        const kind = classifyError(err);
        jobLog.warn({ err, attempt, kind }, 'step failed');
        if (isTerminal(err) || attempt >= attempts)
          return { step: job.step, key: job.key, status: 'failed', rows: 0, rejects: 0, error: describeError(err), error_kind: kind };
        await new Promise((r) => setTimeout(r, backoffDelay(attempt, opts.backoffMs ?? 250)));
      }
    }
  };
  const pool = async <T>(items: T[], fn: (item: T) => Promise<void>) => {
    const queue = [...items];
    await Promise.all(
      Array.from({ length: Math.max(1, opts.concurrency ?? 1) }, async () => {
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
      }),
    );
  };

  // Fetch stage: every fetch job once (retried alone), before the children that read its files.
  await pool(fetches, async (f) => {
    const outcome = await runJob(f);
    fetchOutcomes.set(f.key, outcome);
    outcomes.push(outcome);
    opts.onProgress?.({ domain, stage: 'ingest', done: ++done, total });
  });
  const discardAndFail = async (key: string, error: string | undefined): Promise<never> => {
    await (await StagingRun.open(opts.config.dataDir, pipeline.domain, runId)).discard();
    await notifyRun(opts.config.dataDir, log, {
      type: 'run.failed',
      domain,
      runId,
      snapshotId: null,
      outcomes,
      planRejects: plan.rejects?.length,
      error: `required input ${key}: ${error}`,
    });
    throw new RunFailedError(`${domain} run ${runId} failed: required input ${key}: ${error}`, { runId, child: key });
  };
  const claimed = new Set(plan.children.flatMap((c) => c.after ?? []));
  for (const f of fetches) {
    const o = fetchOutcomes.get(f.key)!;
    // A failed fetch job no child waits for is a file-level reject (BullMQ: ignored dependency of publish).
    if (o.status === 'failed' && !claimed.has(f.key)) log.warn({ fetch: f.key, error: o.error }, 'fetch failed');
  }

  // Parse/load stage.
  const workers = pool(plan.children, async (child) => {
    const failedFetch = (child.after ?? []).map((k) => fetchOutcomes.get(k)!).find((o) => o.status === 'failed');
    const outcome: ChildOutcome = failedFetch
      ? {
          step: child.step,
          key: child.key,
          status: 'failed',
          rows: 0,
          rejects: 0,
          error: `fetch ${failedFetch.key} failed: ${failedFetch.error}`,
          error_kind: failedFetch.error_kind,
        }
      : await runJob(child);
    outcomes.push(outcome);
    if (outcome.status === 'failed' && child.required) await discardAndFail(child.key, outcome.error);
    opts.onProgress?.({ domain, stage: 'ingest', done: ++done, total });
  });
  await workers;
  opts.onProgress?.({ domain, stage: 'publish', done: 0, total: 1 });
  const published = await processPublish(pipeline, {
    config: opts.config,
    runId,
    log,
    inputDigest: plan.inputDigest,
    outcomes,
    planRejects: plan.rejects,
    planMeta: plan.meta,
    refreshDigest: fetches.length ? { inputDir } : undefined,
  });
  opts.onProgress?.({ domain, stage: 'publish', done: 1, total: 1 });
  const failed = outcomes.filter((o) => o.status === 'failed').length;
  log.info({ snapshot_id: published.manifest.snapshot_id, failed_children: failed }, 'published');
  await notifyRun(opts.config.dataDir, log, {
    type: 'run.published',
    domain,
    runId,
    snapshotId: published.manifest.snapshot_id,
    outcomes,
    planRejects: plan.rejects?.length,
  });
  return {
    domain,
    run_id: runId,
    skipped: false,
    snapshot_id: published.manifest.snapshot_id,
    rows: outcomes.reduce((a, o) => a + o.rows, 0),
    rejects: outcomes.reduce((a, o) => a + o.rejects, 0) + failed + (plan.rejects?.length ?? 0),
    failed_children: failed,
    children: outcomes,
    plan_rejects: plan.rejects ?? [],
    ...(plan.meta?.incremental ? { incremental: plan.meta.incremental as RunReport['incremental'] } : {}),
    duration_ms: Date.now() - started,
  };
}

/** One-line description of an error with its file and position when it is a ParseError. */
export function describeError(err: unknown): string {
  if (err instanceof ParseError) {
    const c = err.context;
    const where = [c.file, c.line != null ? `line ${c.line}` : null, c.position != null ? `position ${c.position}` : null]
      .filter(Boolean)
      .join(', ');
    return where ? `${err.message} (${where})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
