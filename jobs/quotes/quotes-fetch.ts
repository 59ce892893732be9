/**
 * The fetch step of the quotes pipeline: with POLYGON_API_KEY and
 * QUOTES_FETCH_TICKERS set, each run downloads the daily bars of every listed
 * ticker for the last QUOTES_FETCH_DAYS calendar days (ending on the run's UTC
 * date) from Polygon into `<inputDir>/quotes/polygon/`, with the `.meta.json`
 * sidecar the polygon parse step turns into origin leaves (URL without the
 * key, retrieved_at). One fetch job per ticker (`polygon-fetch-<TICKER>-<from>-<to>`);
 * its `polygon` parse child waits for it. Without both settings the quotes
 * pipeline reads local inputs only. Requests share one limiter of
 * POLYGON_RATE_PER_MIN (free tier: 5 per minute): Redis-backed with REDIS_URL,
 * so it holds across every worker, else one token bucket per process.
 */
import path from 'node:path';
import { z } from 'zod';
import { Redis } from 'ioredis';
import type { Config } from '../../lib/config.ts';
import { TokenBucketLimiter, type RateLimiter } from '../../lib/http-client.ts';
import { RedisRateLimiter } from '../../lib/sec-limiter.ts';
import { normalizeTicker } from '../../ingest/quotes/quote.schema.ts';
import type { FetchJob, StepContext, StepResult } from '../pipeline.ts';
import { isFetchedWhole } from '../fetched-file.ts';
import { PolygonClient, polygonOptionsFromConfig } from './polygon-client.ts';

export const POLYGON_FETCH_STEP = 'fetch';

export const polygonFetchPayload = z.object({
  ticker: z.string().min(1),
  from: z.iso.date(),
  to: z.iso.date(),
  /** `<inputDir>/quotes` of the run. */
  dir: z.string(),
});
export type PolygonFetchPayload = z.infer<typeof polygonFetchPayload>;

/** Whether a remote Polygon source is configured for the quotes runs. */
export function polygonFetchConfigured(config: Pick<Config, 'POLYGON_API_KEY' | 'QUOTES_FETCH_TICKERS'>): boolean {
  return Boolean(config.POLYGON_API_KEY && config.QUOTES_FETCH_TICKERS);
}

/** The file a fetch job writes (the name PolygonClient.saveDailyAggs gives it). */
export function polygonFetchOutput(quotesDir: string, ticker: string, from: string, to: string): string {
  return path.join(quotesDir, 'polygon', `${normalizeTicker(ticker)}_${from}_${to}_adjusted.json`);
}

/** Step name of the market-wide grouped-daily fetch jobs. */
export const POLYGON_GROUPED_STEP = 'fetch-grouped';

export const polygonGroupedPayload = z.object({ date: z.iso.date(), adjusted: z.boolean(), dir: z.string() });
export type PolygonGroupedPayload = z.infer<typeof polygonGroupedPayload>;

/** The file of one day's grouped bars: `<quotes>/polygon/grouped/{date}_{adjusted|raw}.json`. */
export function groupedOutput(quotesDir: string, date: string, adjusted: boolean): string {
  return path.join(quotesDir, 'polygon', 'grouped', `${date}_${adjusted ? 'adjusted' : 'raw'}.json`);
}

/**
 * Market-wide planning (QUOTES_FETCH_GROUPED): one job per weekday of the window and series whose file is not
 * whole on disk yet, so the days an earlier run missed (a failed request, the machine off) are filled now; with
 * QUOTES_FETCH_ACTIONS (default) likewise one job per weekday for its splits and one for its dividends.
 */
async function planGroupedFetch(config: Config, dir: string, now: Date): Promise<FetchJob[]> {
  const until = config.QUOTES_FETCH_UNTIL ?? new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
  const series = [...new Set(config.QUOTES_GROUPED_SERIES.split(',').map((x) => x.trim() === 'adjusted'))];
  const jobs: FetchJob[] = [];
  for (let i = config.QUOTES_FETCH_DAYS - 1; i >= 0; i--) {
    const d = new Date(Date.parse(`${until}T00:00:00Z`) - i * 86_400_000);
    if (d.getUTCDay() === 0 || d.getUTCDay() === 6) continue;
    const date = d.toISOString().slice(0, 10);
    for (const adjusted of series) {
      const file = groupedOutput(dir, date, adjusted);
      if (await isFetchedWhole(file)) continue;
      jobs.push({
        step: POLYGON_GROUPED_STEP,
        key: `polygon-grouped-${date}-${adjusted ? 'adjusted' : 'raw'}`,
        data: { date, adjusted, dir } satisfies PolygonGroupedPayload,
        outputs: [file],
      });
    }
    if (!config.QUOTES_FETCH_ACTIONS) continue;
    for (const kind of ['splits', 'dividends'] as const) {
      const file = referenceOutput(dir, date, kind);
      if (await isFetchedWhole(file)) continue;
      jobs.push({
        step: POLYGON_REFERENCE_STEP,
        key: `polygon-${kind}-${date}`,
        data: { date, kind, dir } satisfies PolygonReferencePayload,
        outputs: [file],
      });
    }
  }
  return jobs;
}

/** Step name of the per-day splits and dividends fetch jobs (market-wide, with the grouped daily bars). */
export const POLYGON_REFERENCE_STEP = 'fetch-reference';

export const polygonReferencePayload = z.object({ date: z.iso.date(), kind: z.enum(['splits', 'dividends']), dir: z.string() });
export type PolygonReferencePayload = z.infer<typeof polygonReferencePayload>;

/** The file of one day's splits or dividends: `<quotes>/polygon/reference/{date}_{splits|dividends}.json`. */
export function referenceOutput(quotesDir: string, date: string, kind: 'splits' | 'dividends'): string {
  return path.join(quotesDir, 'polygon', 'reference', `${date}_${kind}.json`);
}

/** The splits/dividends fetch step: one day of one kind for the whole market, through the shared Polygon limiter. */
export async function processPolygonReferenceFetch(ctx: StepContext<PolygonReferencePayload>): Promise<StepResult> {
  const client = new PolygonClient({ ...polygonOptionsFromConfig(ctx.config), limiter: getPolygonLimiter(ctx.config) });
  const { date, kind, dir } = ctx.data;
  const files = await client.saveReference(referenceOutput(dir, date, kind), kind, date);
  return { rows: 0, rejects: 0, detail: { files: files.map((f) => path.relative(dir, f)) } };
}

/** The grouped-daily fetch step: one day of one series for the whole market. */
export async function processPolygonGroupedFetch(ctx: StepContext<PolygonGroupedPayload>): Promise<StepResult> {
  const client = new PolygonClient({ ...polygonOptionsFromConfig(ctx.config), limiter: getPolygonLimiter(ctx.config) });
  const { date, adjusted, dir } = ctx.data;
  const file = await client.saveGroupedDaily(groupedOutput(dir, date, adjusted), date, adjusted);
  return { rows: 0, rejects: 0, detail: { file: path.relative(dir, file) } };
}

/** The quotes pipeline's fetch planning hook: grouped daily (market-wide), or one fetch job per configured ticker, or `[]`. */
export async function planPolygonFetch(ctx: { config: Config; inputDir: string }, now = new Date()): Promise<FetchJob[]> {
  const { config } = ctx;
  if (config.QUOTES_FETCH_GROUPED && config.POLYGON_API_KEY) return planGroupedFetch(config, path.join(ctx.inputDir, 'quotes'), now);
  if (!polygonFetchConfigured(config)) return [];
  if (config.QUOTES_FETCH_UNTIL) now = new Date(`${config.QUOTES_FETCH_UNTIL}T12:00:00Z`);
  const to = now.toISOString().slice(0, 10);
  const from = new Date(now.getTime() - config.QUOTES_FETCH_DAYS * 86_400_000).toISOString().slice(0, 10);
  const dir = path.join(ctx.inputDir, 'quotes');
  const tickers = [
    ...new Set(
      config
        .QUOTES_FETCH_TICKERS!.split(/[\s,;]+/)
        .filter(Boolean)
        .map((t) => normalizeTicker(t)),
    ),
  ].sort();
  return tickers.map((ticker) => ({
    step: POLYGON_FETCH_STEP,
    key: `polygon-fetch-${ticker}-${from}-${to}`,
    data: { ticker, from, to, dir } satisfies PolygonFetchPayload,
    outputs: [polygonFetchOutput(dir, ticker, from, to)],
  }));
}

let shared: { key: string; limiter: RateLimiter } | null = null;

/** The process's Polygon limiter (Redis sliding window shared by all workers with REDIS_URL). */
export function getPolygonLimiter(config: Pick<Config, 'REDIS_URL' | 'QUEUE_PREFIX' | 'POLYGON_RATE_PER_MIN'>): RateLimiter {
  const key = `${config.REDIS_URL ?? 'local'}|${config.QUEUE_PREFIX}|${config.POLYGON_RATE_PER_MIN}`;
  if (shared?.key === key) return shared.limiter;
  const limiter = config.REDIS_URL
    ? new RedisRateLimiter(new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3 }), {
        key: `${config.QUEUE_PREFIX}:limiter:polygon`,
        max: config.POLYGON_RATE_PER_MIN,
        windowMs: 60_000,
        ownsConnection: true,
      })
    : new TokenBucketLimiter(config.POLYGON_RATE_PER_MIN / 60);
  void (shared?.limiter as { close?: () => Promise<void> } | undefined)?.close?.();
  shared = { key, limiter };
  return limiter;
}

/** Closes the process's Polygon limiter (its Redis connection). */
export async function closePolygonLimiter(): Promise<void> {
  const s = shared;
  shared = null;
  await (s?.limiter as { close?: () => Promise<void> } | undefined)?.close?.();
}

/** The quotes fetch step: one ticker's daily bars through the Polygon client (its retries) and the shared limiter. */
export async function processPolygonFetch(ctx: StepContext<PolygonFetchPayload>): Promise<StepResult> {
  const client = new PolygonClient({ ...polygonOptionsFromConfig(ctx.config), limiter: getPolygonLimiter(ctx.config) });
  const { ticker, from, to, dir } = ctx.data;
  const file = await client.saveDailyAggs(dir, ticker, from, to, true);
  return { rows: 0, rejects: 0, detail: { file: path.relative(dir, file) } };
}
