/**
 * `npm run ingest -- [domain ...] [--force] [--full] [--input DIR] [--no-fetch]`
 *
 * `--force` runs even when the inputs equal the current snapshot's; `--full` parses every input (an
 * incremental domain otherwise reuses the rows of inputs whose SHA-256 the current snapshot recorded).
 *
 * A domain with a remote source configured (EDGAR_FETCH_*, QUOTES_FETCH_TICKERS)
 * fetches first (fetch → parse → publish); `--no-fetch` reads local inputs only.
 * Without REDIS_URL, runs the pipelines in this process (progress bar).
 * With REDIS_URL, enqueues a run per domain for the workers (`npm run worker`)
 * and prints the run ids.
 */
import { parseArgs } from 'node:util';
import path from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { createLogger } from '../../lib/log.ts';
import { runPipelineInProcess } from '../in-process.ts';
import { pipelineFor, pipelines } from '../pipelines.ts';
import { createProgressPrinter } from '../progress.ts';
import { ensureSample } from '../sample.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    force: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    input: { type: 'string' },
    'in-process': { type: 'boolean', default: false },
    'no-fetch': { type: 'boolean', default: false },
  },
});
const config = loadConfig(process.env);
const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
const selected = positionals.length ? positionals.map(pipelineFor) : pipelines;
const inputDir = values.input ? path.resolve(values.input) : config.inputDir;
if (!values.input && config.usesSample) await ensureSample(config.inputDir, { scale: config.SAMPLE_SCALE, seed: config.SAMPLE_SEED });

if (config.REDIS_URL && !values['in-process']) {
  const { enqueueRun, closeQueues } = await import('../bullmq.ts');
  for (const p of selected) {
    const { runId, jobId } = await enqueueRun(config, p.domain.domain, {
      inputDir,
      force: values.force,
      full: values.full,
      fetch: !values['no-fetch'],
    });
    console.log(`enqueued ${p.domain.domain} run ${runId} (job ${jobId})`);
  }
  await closeQueues();
} else {
  let failed = false;
  const progress = createProgressPrinter();
  for (const p of selected) {
    try {
      const r = await runPipelineInProcess(p, {
        config,
        log,
        inputDir,
        force: values.force,
        full: values.full,
        fetch: !values['no-fetch'],
        onProgress: progress,
      });
      console.log(
        JSON.stringify({
          domain: r.domain,
          run_id: r.run_id,
          skipped: r.skipped,
          snapshot_id: r.snapshot_id,
          rows: r.rows,
          rejects: r.rejects,
          incremental: r.incremental,
          failed_children: r.children.filter((c) => c.status === 'failed').map((c) => ({ key: c.key, error: c.error })),
          duration_ms: r.duration_ms,
        }),
      );
    } catch (e) {
      failed = true;
      console.error(`[${p.domain.domain}] ${(e as Error).message}`);
    }
  }
  process.exit(failed ? 1 : 0);
}
