/**
 * The FMCSA fetch step: downloads the DOT open-data portal's full CSV exports by dataset id
 * (`/api/views/{id}/rows.csv?accessType=DOWNLOAD`, FMCSA_DATASETS) and other FMCSA downloads (the SMS zip, L&I
 * files: FMCSA_DOWNLOAD_URLS) into `<inputDir>/fmcsa/{portal,downloads}/`, each streamed to disk (never whole in
 * memory) with its SHA-256 computed while downloading and a `.meta.json` sidecar (jobs/fetched-file.ts).
 *
 * Conditional GET: while planning, a dataset already on disk is asked for with its `ETag` (`If-None-Match`) and
 * `Last-Modified` (`If-Modified-Since`); a 304 means unchanged, and no fetch job is planned for it, so a run in
 * which nothing changed has nothing new and is skipped (nothing re-ingested). A portal that sends no validator is
 * downloaded each run; a body whose SHA-256 equals the file on disk leaves the file untouched.
 *
 * A download is checked before it replaces the file on disk: a CSV/TXT export must carry a header Proofline reads
 * (a changed header is rejected with the file and line 1), a zip must end with its central directory (a truncated
 * zip is rejected). A rejected download fails its fetch job terminally, so its (required) parse child fails and
 * the run publishes nothing: the published snapshot stays as it was. The previous good file stays on disk.
 */
import { existsSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Config } from '../../lib/config.ts';
import { ParseError } from '../../lib/errors.ts';
import { hashFile } from '../../lib/hash.ts';
import { HttpClient } from '../../lib/http-client.ts';
import type { Logger } from '../../lib/log.ts';
import { detectFormat } from '../../ingest/fmcsa/formats.ts';
import { writeFetchedFile } from '../fetched-file.ts';
import { readFirstLine, readSidecar } from '../inputs.ts';
import type { FetchJob, StepContext, StepResult } from '../pipeline.ts';

export const FMCSA_FETCH_STEP = 'fetch';

export const fmcsaFetchPayload = z.object({
  /** URL path (portal export) or absolute URL. */
  url: z.string(),
  /** Where the file goes. */
  file: z.string(),
});
export type FmcsaFetchPayload = z.infer<typeof fmcsaFetchPayload>;

/** Portal export path of a dataset id. */
export function portalExportPath(id: string): string {
  return `/api/views/${encodeURIComponent(id)}/rows.csv?accessType=DOWNLOAD`;
}

/** The download targets configured: portal exports and other URLs, with their files under `<inputDir>/fmcsa/`. */
export function fmcsaTargets(
  config: Pick<Config, 'FMCSA_DATASETS' | 'FMCSA_DOWNLOAD_URLS'>,
  inputDir: string,
): Array<{ key: string; url: string; file: string }> {
  const out: Array<{ key: string; url: string; file: string }> = [];
  for (const id of (config.FMCSA_DATASETS ?? '').split(/[\s,]+/).filter(Boolean)) {
    if (!/^[a-z0-9]{4}-[a-z0-9]{4}$/.test(id))
      throw new ParseError(`FMCSA_DATASETS: "${id}" is not a portal dataset id (xxxx-xxxx)`, { parameter: 'FMCSA_DATASETS' });
    out.push({ key: `fmcsa-fetch-${id}`, url: portalExportPath(id), file: path.join(inputDir, 'fmcsa', 'portal', `${id}.csv`) });
  }
  for (const u of (config.FMCSA_DOWNLOAD_URLS ?? '').split(/[\s,]+/).filter(Boolean)) {
    const name = decodeURIComponent(new URL(u).pathname.split('/').pop() || 'download');
    out.push({
      key: `fmcsa-fetch-${name.replace(/[^a-zA-Z0-9_.-]+/g, '_')}`,
      url: u,
      file: path.join(inputDir, 'fmcsa', 'downloads', name),
    });
  }
  return out;
}

function clientOf(config: Config): HttpClient {
  return new HttpClient({
    baseUrl: config.FMCSA_PORTAL_BASE_URL,
    userAgent: config.SEC_USER_AGENT ?? 'Proofline FMCSA fetch (open-data bulk exports)',
    timeoutMs: config.FMCSA_DOWNLOAD_IDLE_MS,
    attempts: 3,
    backoffMs: 1000,
  });
}

/** The validators of the copy on disk, as conditional request headers (empty when there is no whole copy). */
async function conditionalHeaders(file: string): Promise<Record<string, string>> {
  const meta = await readSidecar(file);
  const st = await stat(file).catch(() => null);
  if (!meta || !st || (typeof meta.bytes === 'number' && meta.bytes !== st.size)) return {};
  const h: Record<string, string> = {};
  if (typeof meta.etag === 'string') h['if-none-match'] = meta.etag;
  if (typeof meta.last_modified === 'string') h['if-modified-since'] = meta.last_modified;
  return h;
}

/**
 * The fmcsa pipeline's fetch planning hook: one fetch job per configured target, except those the source says are
 * unchanged (304 to a conditional GET).
 */
export async function planFmcsaFetch(ctx: {
  config: Config;
  runId: string;
  inputDir: string;
  log: Logger;
  signal?: AbortSignal;
}): Promise<FetchJob[]> {
  const targets = fmcsaTargets(ctx.config, ctx.inputDir);
  if (!targets.length) return [];
  const client = clientOf(ctx.config);
  const jobs: FetchJob[] = [];
  const unchanged: string[] = [];
  for (const t of targets) {
    const headers = await conditionalHeaders(t.file);
    if (Object.keys(headers).length) {
      const res = await client.openStream(t.url, { headers, signal: ctx.signal });
      // Only the status line was wanted: the body (if any) is left to the fetch job.
      await res.body[Symbol.asyncIterator]().return?.(undefined);
      if (res.status === 304) {
        unchanged.push(t.key);
        continue;
      }
    }
    jobs.push({ step: FMCSA_FETCH_STEP, key: t.key, data: { url: t.url, file: t.file } satisfies FmcsaFetchPayload, outputs: [t.file] });
  }
  ctx.log.info({ fetch_jobs: jobs.length, unchanged }, 'FMCSA downloads planned');
  return jobs;
}

/** Why a downloaded file must not replace the one on disk, or null. */
async function downloadProblem(file: string, isZip: boolean, shownAs: string): Promise<ParseError | null> {
  if (isZip) {
    const fh = await open(file, 'r');
    try {
      const { size } = await fh.stat();
      const tail = Buffer.alloc(Math.min(size, 65_557));
      await fh.read(tail, 0, tail.length, size - tail.length);
      const head = Buffer.alloc(4);
      await fh.read(head, 0, 4, 0);
      if (head.readUInt32LE(0) !== 0x04034b50) return new ParseError(`${shownAs}: not a zip file`, { file: shownAs, position: 0 });
      if (tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])) < 0)
        return new ParseError(`${shownAs}: truncated zip (no end of central directory)`, { file: shownAs, position: size });
      return null;
    } finally {
      await fh.close();
    }
  }
  const first = await readFirstLine(file);
  if (!detectFormat(first)) {
    const what = /<html|<!doctype/i.test(first) ? 'an HTML page, not a CSV export' : `an unrecognised header (${first.slice(0, 120)})`;
    return new ParseError(`${shownAs}: ${what}`, { file: shownAs, line: 1 });
  }
  return null;
}

async function sha256Of(file: string): Promise<string | null> {
  if (!existsSync(file)) return null;
  return (await hashFile(file)).sha256;
}

/** The fetch step: streams one download next to its target, checks it, and moves it into place unless unchanged. */
export async function processFmcsaFetch(ctx: StepContext<FmcsaFetchPayload>): Promise<StepResult> {
  const { url, file } = ctx.data;
  const client = clientOf(ctx.config);
  const res = await client.openStream(url, { headers: await conditionalHeaders(file), signal: ctx.signal });
  if (res.status === 304) return { rows: 0, rejects: 0, detail: { unchanged: true, status: 304 } };
  const incoming = `${file}.incoming`;
  const shownAs = client.url(url);
  const validators = {
    ...(res.headers.get('etag') ? { etag: res.headers.get('etag') } : {}),
    ...(res.headers.get('last-modified') ? { last_modified: res.headers.get('last-modified') } : {}),
  };
  const written = await writeFetchedFile(incoming, res.body, (h) => ({
    source_url: res.url,
    retrieved_at: res.retrieved_at,
    sha256: h.sha256,
    bytes: h.bytes,
    status: res.status,
    run_id: ctx.runId,
    ...validators,
  }));
  try {
    const problem = await downloadProblem(incoming, /\.zip$/i.test(file), shownAs);
    if (problem) {
      await ctx.run.writeRejects(`fetch-${path.basename(file)}`, [
        {
          dataset: 'fmcsa/download',
          file: shownAs,
          line: (problem.context.line as number | undefined) ?? null,
          reason: `${problem.message}${problem.context.position != null ? ` (position ${problem.context.position})` : ''}`,
          raw: null,
        },
      ]);
      throw problem;
    }
    const same = (await readSidecar(file))?.sha256 === written.sha256 && (await sha256Of(file)) === written.sha256;
    if (same) {
      // Same bytes as the copy on disk: keep it untouched (its mtime keeps the inputs' digest), refresh only the validators.
      await rename(`${incoming}.meta.json`, `${file}.meta.json`);
      return { rows: 0, rejects: 0, detail: { unchanged: true, sha256: written.sha256 } };
    }
    await rename(`${incoming}.meta.json`, `${file}.meta.json`);
    await rename(incoming, file);
    return { rows: 0, rejects: 0, detail: { written: file, sha256: written.sha256, bytes: written.bytes } };
  } finally {
    await rm(incoming, { force: true });
    await rm(`${incoming}.meta.json`, { force: true });
  }
}
