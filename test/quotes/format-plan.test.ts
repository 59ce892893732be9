/**
 * Regression guard of issue 22, item 3 (every quote format ingests as fast as the best): the same bars written as
 * Alpaca SDK CSV, Alpaca daily CSV and a Polygon aggregates response take the same plan: one parse child per file,
 * each folding its own chains from rows in key order (jobs/quotes/quotes-fold.ts, no sort), and a publish that only concatenates the children's parts
 * (the per-file-folds fast path). Speed itself is measured by `npm run bench -- quotes`, not here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import pino from 'pino';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import type { RunReport } from '../../jobs/processors.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { writeInput } from './quotes-fixture.ts';

const FORMATS = ['alpaca-sdk', 'alpaca-daily', 'polygon'] as const;
type Format = (typeof FORMATS)[number];
/** Two files per format: tickers AAA and BBB in the first, CCC in the second. */
const FILES = [['AAA', 'BBB'], ['CCC']];
const DAYS = 12;

interface Bar {
  ticker: string;
  day: Date;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  vwap: number;
  trades: number;
}

function barsOf(tickers: string[]): Bar[] {
  const bars: Bar[] = [];
  for (const [k, ticker] of tickers.entries())
    for (let d = 0, day = Date.UTC(2024, 0, 2); bars.filter((b) => b.ticker === ticker).length < DAYS; day += 86_400_000) {
      if ([0, 6].includes(new Date(day).getUTCDay())) continue;
      const close = 10 + k * 7 + d++ * 0.25;
      bars.push({
        ticker,
        day: new Date(day),
        open: close - 0.1,
        high: close + 0.5,
        low: close - 0.5,
        close,
        volume: 1000 + d,
        vwap: close - 0.05,
        trades: 10 + d,
      });
    }
  return bars;
}

/** The file of `format` holding `bars` (the layouts of ingest/quotes/formats.ts; midnight New York is 05:00 UTC in January). */
function fileOf(format: Format, bars: Bar[]): string {
  const ts = (b: Bar) => `${b.day.toISOString().slice(0, 10)} 05:00:00+00:00`;
  if (format === 'alpaca-sdk')
    return `timestamp,symbol,open,high,low,close,volume,vwap,trade_count\n${bars.map((b) => `${ts(b)},${b.ticker},${b.open},${b.high},${b.low},${b.close},${b.volume},${b.vwap},${b.trades}`).join('\n')}\n`;
  if (format === 'alpaca-daily')
    return `Date,symbol,Open,High,Low,Close,Volume,Trades,VWAP\n${bars.map((b) => `${ts(b)},${b.ticker},${b.open},${b.high},${b.low},${b.close},${b.volume},${b.trades},${b.vwap}`).join('\n')}\n`;
  const results = bars.map((b) => ({
    T: b.ticker,
    v: b.volume,
    vw: b.vwap,
    o: b.open,
    c: b.close,
    h: b.high,
    l: b.low,
    t: b.day.getTime() + 5 * 3_600_000,
    n: b.trades,
  }));
  return JSON.stringify({ adjusted: false, status: 'OK', results });
}

describe('every quote format takes the same ingest plan', () => {
  let dir: string;
  const runs = new Map<Format, { report: RunReport; plan: string; reader: SnapshotReader }>();
  beforeAll(async () => {
    dir = await tempDir();
    for (const format of FORMATS) {
      const input = path.join(dir, `in-${format}`);
      for (const [f, tickers] of FILES.entries())
        await writeInput(input, `bars-${f}.${format === 'polygon' ? 'json' : 'csv'}`, fileOf(format, barsOf(tickers)));
      const lines: string[] = [];
      const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
      const config = testConfig(path.join(dir, `data-${format}`));
      const report = await runPipelineInProcess(quotesPipeline, {
        config,
        log,
        inputDir: input,
        force: true,
        backoffMs: 1,
        concurrency: 3,
      });
      const plan = lines.map((l) => JSON.parse(l).msg as string).find((m) => m.startsWith('quotes derive: plan')) ?? '';
      runs.set(format, { report, plan, reader: await SnapshotReader.open(config.dataDir, 'quotes', { poolSize: 1 }) });
    }
  }, 120_000);
  afterAll(async () => {
    for (const r of runs.values()) await r.reader.close();
    await removeDir(dir);
  });

  it('runs one parse child per file that folds its own chains, and publishes by concatenating the parts', () => {
    for (const format of FORMATS) {
      const { report, plan } = runs.get(format)!;
      expect(report.failed_children).toBe(0);
      expect(report.children.map((c) => c.key).sort()).toEqual(FILES.map((_, f) => `bars-${f}.${format === 'polygon' ? 'json' : 'csv'}`));
      // Folded in the child, from rows still in the file's key order (the Polygon load joins each instant's New York
      // date back and must keep the results' order, or the fold sorts).
      for (const c of report.children) expect(c.detail).toMatchObject({ folded: true, ordered: true });
      // A compact Polygon response of plain results (string `T`, numbers elsewhere) is read typed in one pass; in
      // Polygon's own order (`T` first) by read_json, its `T` renamed (one JSON parse per result).
      if (format === 'polygon')
        for (const c of report.children) expect(c.detail).toMatchObject({ plain: true, renamed: true, read: 'read_json' });
      expect(report.rows).toBe(3 * DAYS);
      expect(plan).toMatch(/plan: per-file folds \(disjoint per-file chains\)/);
    }
  });

  it('gives the same bars, day indexes and flags from every format', async () => {
    const bars = (f: Format) =>
      runs.get(f)!.reader.query(
        `SELECT ticker, CAST(quote_date AS VARCHAR) AS quote_date, CAST(open AS VARCHAR) AS open, CAST(high AS VARCHAR) AS high, CAST(low AS VARCHAR) AS low,
            CAST(close AS VARCHAR) AS close, volume, CAST(vwap AS VARCHAR) AS vwap, trade_count, day_index, flags FROM quote_bars ORDER BY ticker, quote_date`,
      );
    const sdk = await bars('alpaca-sdk');
    expect(sdk).toHaveLength(3 * DAYS);
    expect(await bars('alpaca-daily')).toEqual(sdk);
    expect(await bars('polygon')).toEqual(sdk);
  });
});
