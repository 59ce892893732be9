/**
 * `proofline ingest [DOMAIN ...] [--force] [--full] [--input DIR] [--no-fetch] [--in-process] [--wait]`
 * (alias `npm run ingest -- …`)
 *
 * A domain with a remote source configured (EDGAR_FETCH_*, QUOTES_FETCH_TICKERS)
 * fetches first (fetch → parse → publish); `--no-fetch` reads local inputs only.
 * Without REDIS_URL, runs the pipelines in this process (progress bar) and exits 1
 * when a domain failed. With REDIS_URL, enqueues a run per domain for the workers
 * (`proofline worker`) and prints the run ids; `--wait` then waits for each run and
 * exits with its outcome (0 published or skipped, 1 failed).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger } from '../../lib/log.ts';
import { runPipelineInProcess } from '../in-process.ts';
import type { Pipeline } from '../pipeline.ts';
import { pipelines } from '../pipelines.ts';
import { createProgressPrinter } from '../progress.ts';
import { ensureSample } from '../sample.ts';
import { describeCliError, loadCliConfig, requireRedis, UsageError } from './cli-kit.ts';

export interface IngestOptions {
  force?: boolean;
  /** Parse every input: an incremental domain otherwise reuses the rows of inputs whose SHA-256 the current snapshot recorded. */
  full?: boolean;
  input?: string;
  inProcess?: boolean;
  fetch?: boolean;
  wait?: boolean;
  /** Extra pipelines (a module exporting `pipelines`), as for the worker; the operations tests use it. */
  pipelinesModule?: string;
}

export async function runIngest(domains: string[], opts: IngestOptions): Promise<number> {
  const config = loadCliConfig();
  const useRedis = Boolean(config.REDIS_URL) && !opts.inProcess;
  if (opts.wait && !useRedis)
    throw new UsageError('--wait waits for runs enqueued in Redis: set REDIS_URL (in process, ingest always waits)');
  let known: Pipeline[] = pipelines;
  if (opts.pipelinesModule) {
    const mod = (await import(pathToFileURL(path.resolve(opts.pipelinesModule)).href)) as { pipelines: Pipeline[] };
    const { registerExtraPipelines, knownPipelines } = await import('../bullmq.ts');
    registerExtraPipelines(mod.pipelines);
    known = knownPipelines();
  }
  const byName = new Map(known.map((p) => [p.domain.domain, p]));
  const unknown = domains.filter((d) => !byName.has(d));
  if (unknown.length) throw new UsageError(`unknown domain ${unknown.join(', ')}; known: ${[...byName.keys()].join(', ')}`);
  const selected = domains.length ? domains.map((d) => byName.get(d)!) : pipelines;
  const inputDir = opts.input ? path.resolve(opts.input) : config.inputDir;
  if (!opts.input && config.usesSample) await ensureSample(config.inputDir, { scale: config.SAMPLE_SCALE, seed: config.SAMPLE_SEED });
  const fetch = opts.fetch !== false;

  if (useRedis) {
    await requireRedis(config, 'proofline ingest');
    const { enqueueRun, closeQueues, waitForRun } = await import('../bullmq.ts');
    try {
      const runs: Array<{ domain: string; runId: string }> = [];
      for (const p of selected) {
        const { runId, jobId } = await enqueueRun(config, p.domain.domain, { inputDir, force: opts.force, full: opts.full, fetch });
        console.log(`enqueued ${p.domain.domain} run ${runId} (job ${jobId})`);
        runs.push({ domain: p.domain.domain, runId });
      }
      if (!opts.wait) return 0;
      let failed = false;
      for (const r of runs) {
        const outcome = await waitForRun(config, r.domain, r.runId);
        console.log(JSON.stringify({ domain: r.domain, run_id: r.runId, ...outcome }));
        if (outcome.status === 'failed') {
          failed = true;
          console.error(`[${r.domain}] run ${r.runId} failed: ${outcome.reason}`);
        }
      }
      return failed ? 1 : 0;
    } finally {
      await closeQueues();
    }
  }

  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
  let failed = false;
  const progress = createProgressPrinter();
  for (const p of selected) {
    try {
      const r = await runPipelineInProcess(p, { config, log, inputDir, force: opts.force, full: opts.full, fetch, onProgress: progress });
      console.log(
        JSON.stringify({
          domain: r.domain,
          run_id: r.run_id,
          skipped: r.skipped,
          snapshot_id: r.snapshot_id,
          rows: r.rows,
          rejects: r.rejects,
          failed_children: r.children.filter((c) => c.status === 'failed').map((c) => ({ key: c.key, error: c.error })),
          duration_ms: r.duration_ms,
        }),
      );
    } catch (e) {
      failed = true;
      console.error(`[${p.domain.domain}] ${describeCliError(e)}`);
    }
  }
  return failed ? 1 : 0;
}
