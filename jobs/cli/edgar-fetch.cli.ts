/**
 * `proofline edgar-fetch --cik 320193 [--cik N ...] [--tickers] [--out DIR]`
 *
 * Runs the registry pipeline's fetch step on its own, in this process: plans
 * the same fetch jobs a run would (jobs/registry/registry-fetch.ts; the
 * `--cik`/`--tickers` flags stand in for EDGAR_FETCH_CIKS/EDGAR_FETCH_TICKERS,
 * `--cik tickers` = every CIK of the current ticker file) and downloads each
 * job's files into `DIR/sec/…` (default INPUT_DIR) with `.meta.json` sidecars,
 * through the shared SEC limiter (Redis-backed with REDIS_URL, so it shares the
 * budget with running workers). Needs SEC_USER_AGENT. Then
 * `npm run ingest -- registry --input DIR --no-fetch` ingests them; or set
 * EDGAR_FETCH_CIKS and let `npm run ingest` / the nightly schedule fetch inside the run.
 */
import path from 'node:path';
import { createLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { EdgarClient } from '../registry/edgar-client.ts';
import { type EdgarFetchPayload, fetchEdgarBatch, planEdgarFetch } from '../registry/registry-fetch.ts';
import { loadCliConfig } from './cli-kit.ts';

export async function runEdgarFetch(opts: { cik?: string[]; out?: string; tickers?: boolean }): Promise<number> {
  const config = loadCliConfig({
    ...process.env,
    EDGAR_FETCH_CIKS: (opts.cik ?? []).join(',') || undefined,
    EDGAR_FETCH_TICKERS: opts.tickers ? '1' : undefined,
  });
  try {
    const inputDir = opts.out ? path.resolve(opts.out) : config.inputDir;
    const runId = `edgar-fetch-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}`;
    const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL);
    const planned = await planEdgarFetch({ config, runId, inputDir, log });
    const jobs = Array.isArray(planned) ? planned : planned.fetches;
    const client = EdgarClient.fromConfig(config);
    const report = { jobs: jobs.length, written: 0, missing: [] as string[], failed: [] as Array<{ job: string; reason: string }> };
    for (const job of jobs) {
      try {
        const r = await fetchEdgarBatch(client, job.data as EdgarFetchPayload, { runId });
        report.written += r.written.length;
        report.missing.push(...r.missing.map((m) => m.url));
      } catch (e) {
        report.failed.push({ job: job.key, reason: (e as Error).message });
      }
    }
    console.log(JSON.stringify(report, null, 2));
    return report.failed.length ? 1 : 0;
  } finally {
    await closeSecLimiter();
  }
}
