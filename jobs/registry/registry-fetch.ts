/**
 * The fetch step of the registry pipeline: downloads EDGAR files into the run's
 * input directory (`<inputDir>/sec/{submissions,companyfacts,tickers}/`), each
 * with its `.meta.json` sidecar (`source_url`, `retrieved_at`, `sha256`,
 * `run_id`), so the parse child's origin leaves name the exact EDGAR URL and
 * retrieval time.
 *
 * Configured by EDGAR_FETCH_CIKS (a CIK list, or `tickers` = every CIK of the
 * current ticker file, read while planning), EDGAR_FETCH_TICKERS,
 * EDGAR_FETCH_KINDS and EDGAR_FETCH_BATCH; with none of them set the registry
 * reads local inputs only (`npm start` never touches the network).
 *
 * One fetch job = one kind of file for a batch of CIKs (`edgar-fetch-<kind>-<first cik>-<n>`),
 * run on the SEC queue (`rateLimited: 'sec'`). Every request goes through
 * `EdgarClient.fromConfig`, i.e. the process's SEC limiter: Redis-backed with
 * REDIS_URL, so the SEC fair-access limit (≤ 10 requests/s in total, default 9)
 * holds across all workers; the SEC's 403 rate-limit page pauses every worker
 * for SEC_403_PAUSE_MS (on BullMQ the job is handed back at once, in process it
 * waits). A retried job skips the files an earlier attempt of the same run
 * already wrote (their sidecar carries the run id), so a transient failure
 * re-downloads only what is missing. A CIK the SEC does not have (404, e.g. no
 * XBRL companyfacts) is reported as missing and any older copy of its file is
 * removed, so a run never parses stale bytes as fresh.
 */
import path from 'node:path';
import { z } from 'zod';
import type { Config } from '../../lib/config.ts';
import { InvalidInputError, NotFoundError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/log.ts';
import { normalizeCik, padCik } from '../../ingest/edgar/cik.ts';
import { parseTickers } from '../../ingest/edgar/tickers.ts';
import { removeFetchedFile } from '../fetched-file.ts';
import { readSidecar } from '../inputs.ts';
import type { FetchJob, StepContext, StepResult } from '../pipeline.ts';
import { EdgarClient, writeWithSidecar } from './edgar-client.ts';

export type EdgarFetchKind = 'submissions' | 'companyfacts' | 'tickers';

/** The fetch step's payload: one kind of file for a batch of CIKs (none for `tickers`). */
export const edgarFetchPayload = z.object({
  kind: z.enum(['submissions', 'companyfacts', 'tickers']),
  ciks: z.array(z.number().int().positive()),
  /** `<inputDir>/sec` of the run. */
  dir: z.string(),
});
export type EdgarFetchPayload = z.infer<typeof edgarFetchPayload>;

/** Step name of the fetch jobs in the registry pipeline. */
export const EDGAR_FETCH_STEP = 'fetch';
const TICKERS_FILE = 'company_tickers_exchange.json';

/** Whether a remote EDGAR source is configured for the registry's runs. */
export function edgarFetchConfigured(config: Pick<Config, 'EDGAR_FETCH_CIKS' | 'EDGAR_FETCH_TICKERS'>): boolean {
  return Boolean(config.EDGAR_FETCH_CIKS) || config.EDGAR_FETCH_TICKERS;
}

/** Where a fetch job of `kind` writes the file of `cik`. */
export function edgarFetchOutput(secDir: string, kind: EdgarFetchKind, cik?: number): string {
  return kind === 'tickers' ? path.join(secDir, 'tickers', TICKERS_FILE) : path.join(secDir, kind, `CIK${padCik(cik!)}.json`);
}

/** Parses EDGAR_FETCH_CIKS (comma/space separated); throws InvalidInputError on a bad value. */
export function parseCikList(value: string): number[] {
  const out = new Set<number>();
  for (const part of value.split(/[\s,;]+/).filter(Boolean)) {
    if (!/^\d{1,10}$/.test(part)) throw new InvalidInputError(`EDGAR_FETCH_CIKS: "${part}" is not a CIK (digits), nor "tickers"`, { parameter: 'EDGAR_FETCH_CIKS' });
    out.add(normalizeCik(part));
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * The registry's fetch planning hook (Pipeline.fetch): the fetch jobs of a
 * run, or `[]` when no EDGAR source is configured. With EDGAR_FETCH_CIKS=tickers
 * it downloads the current ticker file now (through the same client and
 * limiter, into the input directory with its sidecar) to learn the CIKs; the
 * plan then reads that file as a local input.
 */
export async function planEdgarFetch(ctx: { config: Config; runId: string; inputDir: string; log: Logger; signal?: AbortSignal }): Promise<FetchJob[]> {
  const { config } = ctx;
  if (!edgarFetchConfigured(config)) return [];
  const secDir = path.join(ctx.inputDir, 'sec');
  const spec = config.EDGAR_FETCH_CIKS?.trim() ?? '';
  const jobs: FetchJob[] = [];
  let ciks: number[] = [];
  if (/^tickers$/i.test(spec)) {
    const client = EdgarClient.fromConfig(config);
    const file = edgarFetchOutput(secDir, 'tickers');
    const res = await client.tickers(ctx.signal);
    await writeWithSidecar(file, res, { run_id: ctx.runId });
    ciks = [...new Set(parseTickers(res.bytes, file).rows.map((r) => r.cik))].sort((a, b) => a - b);
    ctx.log.info({ ciks: ciks.length }, 'EDGAR ticker file fetched while planning');
  } else {
    // Fail early (a terminal error of the plan job) when the operator forgot SEC_USER_AGENT.
    EdgarClient.fromConfig(config, { limiter: { acquire: async () => undefined } });
    ciks = spec ? parseCikList(spec) : [];
    if (config.EDGAR_FETCH_TICKERS) jobs.push({ step: EDGAR_FETCH_STEP, key: 'edgar-fetch-tickers', data: { kind: 'tickers', ciks: [], dir: secDir } satisfies EdgarFetchPayload, outputs: [edgarFetchOutput(secDir, 'tickers')] });
  }
  const kinds = [...new Set(config.EDGAR_FETCH_KINDS.split(',').map((k) => k.trim()))] as Array<'submissions' | 'companyfacts'>;
  for (const kind of kinds) {
    for (let i = 0; i < ciks.length; i += config.EDGAR_FETCH_BATCH) {
      const batch = ciks.slice(i, i + config.EDGAR_FETCH_BATCH);
      jobs.push({
        step: EDGAR_FETCH_STEP,
        key: `edgar-fetch-${kind}-${padCik(batch[0]!)}-${batch.length}`,
        data: { kind, ciks: batch, dir: secDir } satisfies EdgarFetchPayload,
        outputs: batch.map((cik) => edgarFetchOutput(secDir, kind, cik)),
      });
    }
  }
  return jobs;
}

export interface EdgarFetchReport {
  kind: EdgarFetchKind;
  written: string[];
  /** Written by an earlier attempt of the same run (sidecar run_id), not fetched again. */
  kept: string[];
  /** CIKs (or the ticker file) the SEC answered 404 for; their files were removed. */
  missing: Array<{ url: string; file: string }>;
}

/**
 * Downloads one fetch job's files (the work of the fetch step, also used by
 * edgar-fetch.cli.ts). Transient errors throw after the client's own retries
 * (the job is then retried alone); a 404 removes the file and is reported.
 */
export async function fetchEdgarBatch(
  client: EdgarClient,
  job: EdgarFetchPayload,
  opts: { runId: string; skipDoneOfRun?: boolean; signal?: AbortSignal; onFile?: (done: number, total: number) => void | Promise<void> },
): Promise<EdgarFetchReport> {
  const report: EdgarFetchReport = { kind: job.kind, written: [], kept: [], missing: [] };
  const targets = job.kind === 'tickers' ? [undefined] : job.ciks;
  let done = 0;
  for (const cik of targets) {
    const file = edgarFetchOutput(job.dir, job.kind, cik);
    if (opts.skipDoneOfRun && (await readSidecar(file))?.run_id === opts.runId) {
      report.kept.push(file);
    } else {
      const url = job.kind === 'tickers' ? client.www.url(`/files/${TICKERS_FILE}`) : client.data.url(job.kind === 'submissions' ? client.submissionsPath(cik!) : client.companyFactsPath(cik!));
      try {
        const res = job.kind === 'tickers' ? await client.tickers(opts.signal) : job.kind === 'submissions' ? await client.submissions(cik!, opts.signal) : await client.companyFacts(cik!, opts.signal);
        await writeWithSidecar(file, res, { run_id: opts.runId });
        report.written.push(file);
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
        await removeFetchedFile(file);
        report.missing.push({ url, file });
      }
    }
    await opts.onFile?.(++done, targets.length);
  }
  return report;
}

/** The registry's fetch step (Pipeline.steps.fetch). */
export async function processEdgarFetch(ctx: StepContext<EdgarFetchPayload>): Promise<StepResult> {
  // On BullMQ a rate-limit page must not park a worker for 10 minutes: the client pauses the shared
  // limiter and throws, and the runner hands the job back to the (then rate-limited) SEC queue.
  const client = EdgarClient.fromConfig(ctx.config, ctx.runner === 'bullmq' ? { maxPauses: 0 } : {});
  const report = await fetchEdgarBatch(client, ctx.data, {
    runId: ctx.runId,
    skipDoneOfRun: ctx.attempt > 1,
    signal: ctx.signal,
    onFile: (d, t) => (d % 5 === 0 || d === t ? ctx.progress(d, t) : undefined),
  });
  if (report.missing.length) ctx.log.warn({ kind: report.kind, missing: report.missing.map((m) => m.url) }, 'EDGAR has no such file (404): skipped');
  return { rows: 0, rejects: 0, detail: { kind: report.kind, written: report.written.length, kept: report.kept.length, missing: report.missing.map((m) => m.url) } };
}
