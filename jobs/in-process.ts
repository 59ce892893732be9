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
 */
import type { Config } from '../lib/config.ts';
import { classifyError, isTerminal, ParseError, PipelineError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { StagingRun } from '../lib/warehouse/staging.ts';
import { newRunId, type Pipeline } from './pipeline.ts';
import { processPlan, processPublish, processStep, type ChildOutcome, type RunReport } from './processors.ts';
import type { ProgressEvent } from './progress.ts';

export interface InProcessOptions {
  config: Config;
  log: Logger;
  inputDir?: string;
  runId?: string;
  force?: boolean;
  attempts?: number;
  backoffMs?: number;
  concurrency?: number;
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
  const plan = await processPlan(pipeline, { config: opts.config, runId, inputDir, log, force: opts.force });
  if (!plan) {
    return { domain, run_id: runId, skipped: true, snapshot_id: null, rows: 0, rejects: 0, failed_children: 0, children: [], plan_rejects: [], duration_ms: Date.now() - started };
  }
  const attempts = opts.attempts ?? 3;
  const total = plan.children.length;
  let done = 0;
  opts.onProgress?.({ domain, stage: 'ingest', done, total });
  const outcomes: ChildOutcome[] = [];
  const queue = [...plan.children];
  const workers = Array.from({ length: Math.max(1, opts.concurrency ?? 1) }, async () => {
    for (let child = queue.shift(); child; child = queue.shift()) {
      const jobLog = log.child({ job_id: `${domain}:${child.step}:${child.key}` });
      let outcome: ChildOutcome | null = null;
      for (let attempt = 1; attempt <= attempts; attempt++) {
        try {
          const r = await processStep(pipeline, child.step, child.data, {
            config: opts.config,
            runId,
            log: jobLog,
            attempt,
            progress: (d, t) => opts.onProgress?.({ domain, stage: child!.step, done: d, total: t ?? 100, label: child!.key }),
          });
          outcome = { step: child.step, key: child.key, status: 'completed', rows: r.rows, rejects: r.rejects, detail: r.detail };
          break;
        } catch (err) {
          const kind = classifyError(err);
          jobLog.warn({ err, attempt, kind }, 'step failed');
          if (isTerminal(err) || attempt === attempts) {
            outcome = { step: child.step, key: child.key, status: 'failed', rows: 0, rejects: 0, error: describeError(err), error_kind: kind };
            break;
          }
          await new Promise((r) => setTimeout(r, backoffDelay(attempt, opts.backoffMs ?? 250)));
        }
      }
      outcomes.push(outcome!);
      if (outcome!.status === 'failed' && child.required) {
        await (await StagingRun.open(opts.config.dataDir, pipeline.domain, runId)).discard();
        throw new RunFailedError(`${domain} run ${runId} failed: required input ${child.key}: ${outcome!.error}`, { runId, child: child.key });
      }
      opts.onProgress?.({ domain, stage: 'ingest', done: ++done, total });
    }
  });
  await Promise.all(workers);
  opts.onProgress?.({ domain, stage: 'publish', done: 0, total: 1 });
  const published = await processPublish(pipeline, { config: opts.config, runId, log, inputDigest: plan.inputDigest, outcomes, planRejects: plan.rejects });
  opts.onProgress?.({ domain, stage: 'publish', done: 1, total: 1 });
  const failed = outcomes.filter((o) => o.status === 'failed').length;
  log.info({ snapshot_id: published.manifest.snapshot_id, failed_children: failed }, 'published');
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
    duration_ms: Date.now() - started,
  };
}

/** One-line description of an error with its file and position when it is a ParseError. */
export function describeError(err: unknown): string {
  if (err instanceof ParseError) {
    const c = err.context;
    const where = [c.file, c.line != null ? `line ${c.line}` : null, c.position != null ? `position ${c.position}` : null].filter(Boolean).join(', ');
    return where ? `${err.message} (${where})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
