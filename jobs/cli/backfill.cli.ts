/**
 * `proofline backfill [--since YYYY-MM-DD] [--no-bulk] [--kinds submissions,companyfacts] [--input DIR]`
 *
 * Fills a new warehouse: (1) streams the SEC's bulk `submissions.zip` and `companyfacts.zip` and keeps the
 * universe's entries (EDGAR_FETCH_CIKS, default every CIK of the current ticker file) under INPUT_DIR/sec
 * (jobs/registry/edgar-backfill.ts); (2) with `--since`, runs the registry with the EDGAR daily increment from that
 * day (EDGAR_DAILY_INDEX, EDGAR_DAILY_SINCE): every filing document of the universe since then, through the
 * daily index. Without REDIS_URL step 2 runs in this process; with it, a run is enqueued for the workers.
 *
 * Resumable after a kill at any point: run the same command again. Entries and filings already on disk are not
 * fetched again; a bulk archive read to its end is not downloaded again while the SEC serves the same one.
 * Alias `npm run backfill -- …`. Exit code 0 when done, 1 when a step failed (the message says which and where), 2 on bad arguments.
 */
import path from 'node:path';
import { createLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { type BulkKind, backfillBulkArchive } from '../registry/edgar-backfill.ts';
import { EdgarClient } from '../registry/edgar-client.ts';
import { resolveUniverse } from '../registry/registry-fetch.ts';
import { loadCliConfig, requireRedis, UsageError } from './cli-kit.ts';

export async function runBackfill(opts: { since?: string; bulk?: boolean; kinds?: string; input?: string }): Promise<number> {
  if (opts.since && !/^\d{4}-\d{2}-\d{2}$/.test(opts.since)) throw new UsageError(`--since must be YYYY-MM-DD, got ${opts.since}`);
  const kinds = (opts.kinds ?? 'submissions,companyfacts').split(',').map((k) => k.trim()) as BulkKind[];
  if (kinds.some((k) => k !== 'submissions' && k !== 'companyfacts')) throw new UsageError('--kinds: submissions and/or companyfacts');
  const config = loadCliConfig({ ...process.env, ...(opts.since ? { EDGAR_DAILY_INDEX: '1', EDGAR_DAILY_SINCE: opts.since } : {}) });
  try {
    const inputDir = opts.input ? path.resolve(opts.input) : config.inputDir;
    const log = createLogger(config.LOG_LEVEL);
    const client = EdgarClient.fromConfig(config);
    const runId = `backfill-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}`;
    if (opts.bulk !== false) {
      const universe = await resolveUniverse(config, client, inputDir, runId);
      for (const kind of kinds) console.log(JSON.stringify(await backfillBulkArchive(client, kind, { inputDir, universe, log })));
    }
    if (opts.since) {
      if (config.REDIS_URL) {
        await requireRedis(config, 'proofline backfill --since');
        const { enqueueRun, closeQueues } = await import('../bullmq.ts');
        const { runId: r } = await enqueueRun(config, 'registry', { inputDir });
        console.log(`enqueued registry run ${r} (daily index from ${opts.since}); watch it with proofline jobs / Bull Board`);
        await closeQueues();
      } else {
        const { runPipelineInProcess } = await import('../in-process.ts');
        const { registryPipeline } = await import('../registry/registry.pipeline.ts');
        const r = await runPipelineInProcess(registryPipeline, { config, log, inputDir });
        console.log(
          JSON.stringify({
            run_id: r.run_id,
            snapshot_id: r.snapshot_id,
            rows: r.rows,
            rejects: r.rejects,
            failed_children: r.failed_children,
            duration_ms: r.duration_ms,
          }),
        );
      }
    }
    return 0;
  } finally {
    await closeSecLimiter();
  }
}
