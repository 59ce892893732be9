/**
 * The transcripts fetch step: the investor-relations transcripts listed in TRANSCRIPTS_IR_URLS
 * (`TICKER_YYYYQn=URL`, comma separated) are fetched with the IR client (jobs/transcripts/ir-client.ts: the fetch
 * record with URL, time, TLS certificate and addresses goes into the sidecar and becomes the call's fetch leaf)
 * on the transcripts schedule: a URL whose path ends in `.pdf` into `<inputDir>/transcripts/pdf/TICKER_YYYYQn.pdf`
 * (parsed by the pdf step), any other into `<inputDir>/transcripts/html/TICKER_YYYYQn.html` (the html step). A transcript once published
 * does not change: a file already on disk whole is not fetched again.
 */
import path from 'node:path';
import { z } from 'zod';
import type { Config } from '../../lib/config.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { isFetchedWhole } from '../fetched-file.ts';
import type { FetchJob, StepContext, StepResult } from '../pipeline.ts';
import { saveIrDocument } from './ir-client.ts';

export const IR_FETCH_STEP = 'fetch';

export const irFetchPayload = z.object({
  url: z.url(),
  dir: z.string(),
  name: z.string().regex(/^[A-Z][A-Z0-9.-]*_\d{4}Q[1-4]\.(pdf|html)$/),
});
export type IrFetchPayload = z.infer<typeof irFetchPayload>;

/** Parses TRANSCRIPTS_IR_URLS; throws InvalidInputError naming the bad entry. */
export function parseIrUrls(value: string): Array<{ name: string; url: string }> {
  const out: Array<{ name: string; url: string }> = [];
  for (const part of value
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z][A-Za-z0-9.-]*_\d{4}Q[1-4])=(https?:\/\/\S+)$/.exec(part);
    if (!m) throw new InvalidInputError(`TRANSCRIPTS_IR_URLS: "${part}" is not TICKER_YYYYQn=URL`, { parameter: 'TRANSCRIPTS_IR_URLS' });
    const kind = /\.pdf$/i.test(new URL(m[2]!).pathname) ? 'pdf' : 'html';
    out.push({ name: `${m[1]!.toUpperCase()}.${kind}`, url: m[2]! });
  }
  return out;
}

/** The transcripts pipeline's fetch planning hook: one job per listed transcript not yet on disk. */
export async function planIrFetch(ctx: { config: Config; inputDir: string }): Promise<FetchJob[]> {
  if (!ctx.config.TRANSCRIPTS_IR_URLS) return [];
  const jobs: FetchJob[] = [];
  for (const { name, url } of parseIrUrls(ctx.config.TRANSCRIPTS_IR_URLS)) {
    const dir = path.join(ctx.inputDir, 'transcripts', name.endsWith('.pdf') ? 'pdf' : 'html');
    const file = path.join(dir, name);
    if (await isFetchedWhole(file)) continue;
    jobs.push({
      step: IR_FETCH_STEP,
      key: `ir-fetch-${name.replace(/\.(pdf|html)$/, '')}`,
      data: { url, dir, name } satisfies IrFetchPayload,
      outputs: [file],
    });
  }
  return jobs;
}

/** The fetch step: one transcript through the IR client. */
export async function processIrFetch(ctx: StepContext<IrFetchPayload>): Promise<StepResult> {
  const { url, dir, name } = ctx.data;
  const { record } = await saveIrDocument(url, dir, name, {
    userAgent: ctx.config.SEC_USER_AGENT ?? 'Proofline transcripts fetch',
    timeoutMs: 30_000,
  });
  return { rows: 0, rejects: 0, detail: { url, status: record.status, sha256: record.content_sha256, bytes: record.byte_size } };
}
