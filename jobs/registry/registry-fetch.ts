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
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { SourceUnavailableError } from '../../lib/errors.ts';
import { completeSubmissionProblem } from '../../ingest/edgar/sgml.ts';
import { removeFetchedFile } from '../fetched-file.ts';
import { readSidecar } from '../inputs.ts';
import type { FetchJob, FetchPlan, StepContext, StepResult } from '../pipeline.ts';
import {
  DAILY_META_KEY,
  dailyForms,
  filingFile,
  isFetchedWhole,
  missingMarker,
  readDailyCursor,
  walkDailyIndex,
  type DailyFiling,
} from './edgar-daily.ts';
import { EdgarClient, writeWithSidecar } from './edgar-client.ts';

export type EdgarFetchKind = 'submissions' | 'companyfacts' | 'tickers' | 'filings';

/** One filing of a `filings` fetch job: its complete submission, from the daily index row. */
const filingRef = z.object({
  cik: z.number().int().positive(),
  accession: z.string().regex(/^\d{10}-\d{2}-\d{6}$/),
  form: z.string(),
  url_path: z.string().startsWith('/Archives/edgar/data/'),
});

/** The fetch step's payload: one kind of file for a batch of CIKs (none for `tickers`), or a batch of filings. */
export const edgarFetchPayload = z.object({
  kind: z.enum(['submissions', 'companyfacts', 'tickers', 'filings']),
  ciks: z.array(z.number().int().positive()),
  /** `<inputDir>/sec` of the run. */
  dir: z.string(),
  /** `filings`: the complete submissions to download. */
  filings: z.array(filingRef).optional(),
  /** Daily mode: the walk's cursor, stamped into the sidecars (`daily_through`) so a rerun of the same walk skips them. */
  through: z.string().optional(),
});
export type EdgarFetchPayload = z.infer<typeof edgarFetchPayload>;

/** Step name of the fetch jobs in the registry pipeline. */
export const EDGAR_FETCH_STEP = 'fetch';
const TICKERS_FILE = 'company_tickers_exchange.json';

/** Whether a remote EDGAR source is configured for the registry's runs. */
export function edgarFetchConfigured(config: Pick<Config, 'EDGAR_FETCH_CIKS' | 'EDGAR_FETCH_TICKERS' | 'EDGAR_DAILY_INDEX'>): boolean {
  return Boolean(config.EDGAR_FETCH_CIKS) || config.EDGAR_FETCH_TICKERS || config.EDGAR_DAILY_INDEX;
}

/** Where a fetch job of `kind` writes the file of `cik` (`filings`: see filingFile). */
export function edgarFetchOutput(secDir: string, kind: Exclude<EdgarFetchKind, 'filings'>, cik?: number): string {
  return kind === 'tickers' ? path.join(secDir, 'tickers', TICKERS_FILE) : path.join(secDir, kind, `CIK${padCik(cik!)}.json`);
}

/**
 * Fetches the current ticker file into `file` while planning, with a conditional GET (the ETag or Last-Modified
 * of the copy on disk): an unchanged file is neither downloaded again nor rewritten, so the inputs' digest stays
 * the same and a night with nothing new publishes nothing.
 */
export async function fetchTickerFile(client: EdgarClient, file: string, runId: string, signal?: AbortSignal): Promise<Buffer> {
  const meta = (await isFetchedWhole(file)) ? await readSidecar(file) : null;
  const headers: Record<string, string> = {};
  if (typeof meta?.etag === 'string') headers['if-none-match'] = meta.etag;
  if (typeof meta?.last_modified === 'string') headers['if-modified-since'] = meta.last_modified;
  const res = await client.get(client.www, `/files/${TICKERS_FILE}`, signal, headers);
  if (res.status === 304 && meta) return readFile(file);
  if (meta && meta.sha256 === res.sha256) return res.bytes;
  const validators = {
    ...(res.headers.get('etag') ? { etag: res.headers.get('etag') } : {}),
    ...(res.headers.get('last-modified') ? { last_modified: res.headers.get('last-modified') } : {}),
  };
  await writeWithSidecar(file, res, { run_id: runId, ...validators });
  return res.bytes;
}

/**
 * The universe of the daily increment and the backfill: the current ticker file's CIKs (fetched, with a
 * conditional GET) unless EDGAR_FETCH_CIKS lists them.
 */
export async function resolveUniverse(
  config: Config,
  client: EdgarClient,
  inputDir: string,
  runId: string,
  signal?: AbortSignal,
): Promise<Set<number>> {
  const secDir = path.join(inputDir, 'sec');
  const spec = config.EDGAR_FETCH_CIKS?.trim() ?? '';
  if (!spec || /^tickers$/i.test(spec)) {
    const file = edgarFetchOutput(secDir, 'tickers');
    return new Set(parseTickers(await fetchTickerFile(client, file, runId, signal), file).rows.map((r) => r.cik));
  }
  if (config.EDGAR_FETCH_TICKERS) await fetchTickerFile(client, edgarFetchOutput(secDir, 'tickers'), runId, signal);
  return new Set(parseCikList(spec));
}

/**
 * The daily-increment fetch jobs (EDGAR_DAILY_INDEX, jobs/registry/edgar-daily.ts): complete submissions of the
 * universe's filings since the cursor, the submissions JSON of every CIK that filed, the companyfacts of every CIK
 * with a new 10-K/10-Q. Also returns the rejected index files and the new cursor for the snapshot's meta.
 */
async function planDailyFetch(
  ctx: { config: Config; runId: string; inputDir: string; log: Logger; signal?: AbortSignal },
  client: EdgarClient,
  universe: Set<number> | null,
  jobs: FetchJob[],
): Promise<FetchPlan> {
  const { config } = ctx;
  const secDir = path.join(ctx.inputDir, 'sec');
  const cursor = await readDailyCursor(config.dataDir);
  const until = config.EDGAR_DAILY_UNTIL ?? new Date().toISOString().slice(0, 10);
  const walk = await walkDailyIndex(client, {
    secDir,
    cursor,
    since: config.EDGAR_DAILY_SINCE,
    until,
    recheckDays: config.EDGAR_DAILY_RECHECK_DAYS,
    universe,
    forms: dailyForms(config),
    runId: ctx.runId,
    log: ctx.log,
    signal: ctx.signal,
  });
  const through = walk.through ?? undefined;
  const wanted: DailyFiling[] = [];
  for (const f of walk.filings) {
    const file = filingFile(secDir, f.cik, f.accession);
    if (existsSync(missingMarker(file)) || (await isFetchedWhole(file))) continue;
    wanted.push(f);
  }
  for (let i = 0; i < wanted.length; i += config.EDGAR_FETCH_BATCH) {
    const batch = wanted.slice(i, i + config.EDGAR_FETCH_BATCH);
    jobs.push({
      step: EDGAR_FETCH_STEP,
      key: `edgar-fetch-filings-${batch[0]!.accession}-${batch.length}`,
      data: { kind: 'filings', ciks: [], dir: secDir, filings: batch.map(({ day: _d, ...f }) => f), through } satisfies EdgarFetchPayload,
      outputs: batch.map((f) => filingFile(secDir, f.cik, f.accession)),
    });
  }
  // Per-CIK JSON of the companies that filed (and of those whose filings are fetched again), once per walk.
  const perCik = async (kind: 'submissions' | 'companyfacts', ciks: Iterable<number>) => {
    const list: number[] = [];
    for (const cik of [...new Set(ciks)].sort((a, b) => a - b)) {
      const meta = await readSidecar(edgarFetchOutput(secDir, kind, cik));
      if (through && meta?.daily_through === through && (await isFetchedWhole(edgarFetchOutput(secDir, kind, cik)))) continue;
      list.push(cik);
    }
    for (let i = 0; i < list.length; i += config.EDGAR_FETCH_BATCH) {
      const batch = list.slice(i, i + config.EDGAR_FETCH_BATCH);
      jobs.push({
        step: EDGAR_FETCH_STEP,
        key: `edgar-fetch-${kind}-${padCik(batch[0]!)}-${batch.length}`,
        data: { kind, ciks: batch, dir: secDir, through } satisfies EdgarFetchPayload,
        outputs: batch.map((cik) => edgarFetchOutput(secDir, kind, cik)),
      });
    }
  };
  await perCik('submissions', [...walk.filers, ...wanted.map((f) => f.cik)]);
  await perCik('companyfacts', [...walk.factFilers, ...wanted.filter((f) => /^10-[KQ]/i.test(f.form)).map((f) => f.cik)]);
  ctx.log.info(
    {
      cursor,
      through: walk.through,
      requested_days: walk.requested.length,
      filings_seen: walk.filings.length,
      filings_to_fetch: wanted.length,
      fetch_jobs: jobs.length,
      rejected: walk.rejects.length,
    },
    'EDGAR daily index walked',
  );
  return {
    fetches: jobs,
    rejects: walk.rejects,
    meta: {
      [DAILY_META_KEY]: {
        through: walk.through,
        previous: cursor,
        requested_days: walk.requested,
        filings_seen: walk.filings.length,
        filings_fetched: wanted.length,
      },
    },
  };
}

/** Parses EDGAR_FETCH_CIKS (comma/space separated); throws InvalidInputError on a bad value. */
export function parseCikList(value: string): number[] {
  const out = new Set<number>();
  for (const part of value.split(/[\s,;]+/).filter(Boolean)) {
    if (!/^\d{1,10}$/.test(part))
      throw new InvalidInputError(`EDGAR_FETCH_CIKS: "${part}" is not a CIK (digits), nor "tickers"`, { parameter: 'EDGAR_FETCH_CIKS' });
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
export async function planEdgarFetch(ctx: {
  config: Config;
  runId: string;
  inputDir: string;
  log: Logger;
  signal?: AbortSignal;
}): Promise<FetchJob[] | FetchPlan> {
  const { config } = ctx;
  if (!edgarFetchConfigured(config)) return [];
  const secDir = path.join(ctx.inputDir, 'sec');
  const spec = config.EDGAR_FETCH_CIKS?.trim() ?? '';
  const jobs: FetchJob[] = [];
  let ciks: number[] = [];
  if (config.EDGAR_DAILY_INDEX) {
    const client = EdgarClient.fromConfig(config);
    const universe = await resolveUniverse(config, client, ctx.inputDir, ctx.runId, ctx.signal);
    return planDailyFetch(ctx, client, universe, jobs);
  }
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
    if (config.EDGAR_FETCH_TICKERS)
      jobs.push({
        step: EDGAR_FETCH_STEP,
        key: 'edgar-fetch-tickers',
        data: { kind: 'tickers', ciks: [], dir: secDir } satisfies EdgarFetchPayload,
        outputs: [edgarFetchOutput(secDir, 'tickers')],
      });
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
  /** CIKs (or the ticker file, or filings) the SEC answered 404 for; their files were removed. */
  missing: Array<{ url: string; file: string }>;
  /** Bytes that are not what was asked for (a filing URL answering an HTML page with 200): not written. */
  rejected: Array<{ url: string; file: string; reason: string; position: number }>;
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
  if (job.kind === 'filings') return fetchFilings(client, job, opts);
  const report: EdgarFetchReport = { kind: job.kind, written: [], kept: [], missing: [], rejected: [] };
  const targets = job.kind === 'tickers' ? [undefined] : job.ciks;
  let done = 0;
  for (const cik of targets) {
    const file = edgarFetchOutput(job.dir, job.kind, cik);
    if (opts.skipDoneOfRun && (await readSidecar(file))?.run_id === opts.runId) {
      report.kept.push(file);
    } else {
      const url =
        job.kind === 'tickers'
          ? client.www.url(`/files/${TICKERS_FILE}`)
          : client.data.url(job.kind === 'submissions' ? client.submissionsPath(cik!) : client.companyFactsPath(cik!));
      try {
        const res =
          job.kind === 'tickers'
            ? await client.tickers(opts.signal)
            : job.kind === 'submissions'
              ? await client.submissions(cik!, opts.signal)
              : await client.companyFacts(cik!, opts.signal);
        await writeWithSidecar(file, res, { run_id: opts.runId, ...(job.through ? { daily_through: job.through } : {}) });
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

/**
 * A `filings` fetch job: each complete submission not yet whole on disk is downloaded and checked (it must open
 * with `<SEC-DOCUMENT>` and close with `</SEC-DOCUMENT>`). A body cut short is transient (the job is retried and
 * the retry fetches only what is still missing); anything else served as the filing (an HTML page with status 200)
 * is rejected with its URL and position, never written; a 404 is reported and marked so it is not asked for again.
 */
async function fetchFilings(
  client: EdgarClient,
  job: EdgarFetchPayload,
  opts: { runId: string; signal?: AbortSignal; onFile?: (done: number, total: number) => void | Promise<void> },
): Promise<EdgarFetchReport> {
  const report: EdgarFetchReport = { kind: 'filings', written: [], kept: [], missing: [], rejected: [] };
  const filings = job.filings ?? [];
  let done = 0;
  for (const f of filings) {
    const file = filingFile(job.dir, f.cik, f.accession);
    if (await isFetchedWhole(file)) {
      report.kept.push(file);
    } else {
      const url = client.www.url(f.url_path);
      try {
        const res = await client.get(client.www, f.url_path, opts.signal);
        const problem = completeSubmissionProblem(res.bytes);
        if (problem?.kind === 'truncated')
          throw new SourceUnavailableError(`${problem.reason}: ${url}`, { url, position: problem.position });
        if (problem) {
          report.rejected.push({ url, file, reason: problem.reason, position: problem.position });
        } else {
          await writeWithSidecar(file, res, {
            run_id: opts.runId,
            accession: f.accession,
            form: f.form,
            ...(job.through ? { daily_through: job.through } : {}),
          });
          report.written.push(file);
        }
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
        await removeFetchedFile(file);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(
          missingMarker(file),
          JSON.stringify({ source_url: url, status: 404, checked_at: new Date().toISOString(), run_id: opts.runId }, null, 2),
        );
        report.missing.push({ url, file });
      }
    }
    await opts.onFile?.(++done, filings.length);
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
  if (report.missing.length)
    ctx.log.warn({ kind: report.kind, missing: report.missing.map((m) => m.url) }, 'EDGAR has no such file (404): skipped');
  if (report.rejected.length) {
    ctx.log.warn(
      { kind: report.kind, rejected: report.rejected.map((r) => r.url) },
      'EDGAR served something else than the filing: rejected',
    );
    const key = `fetch-${ctx.data.kind}-${ctx.data.filings?.[0]?.accession ?? ctx.data.ciks[0] ?? 'tickers'}`;
    await ctx.run.writeRejects(
      key,
      report.rejected.map((r) => ({
        dataset: 'sec-edgar/filing-document',
        file: r.url,
        line: null,
        reason: `${r.reason} (position ${r.position})`,
        raw: null,
      })),
    );
  }
  return {
    rows: 0,
    rejects: report.rejected.length,
    detail: {
      kind: report.kind,
      written: report.written.length,
      kept: report.kept.length,
      missing: report.missing.map((m) => m.url),
      rejected: report.rejected.map((r) => r.url),
    },
  };
}
