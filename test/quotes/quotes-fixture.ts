/**
 * Builds a temporary quotes input tree over the real fixtures (copies in a temp dir, never
 * into the repo) and runs the quotes pipeline into a temp data dir.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '../../lib/log.ts';
import type { Config } from '../../lib/config.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { POLYGON_SNIFF_MIN_BYTES, quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { fixture } from '../helpers/shared.ts';

export const QUOTE_FIXTURES = [
  'alpaca-daily/NVDA_1Day.csv',
  'alpaca-daily/AAPL_1Day.csv',
  'alpaca-sdk/AAPL.csv',
  'alpaca-sdk/MSFT.csv',
  'polygon-mocks/v2__aggs__ticker__AAPL__range__1__day__2005-04-01__2005-04-04.json',
];

export async function linkQuoteFixtures(inputDir: string, files = QUOTE_FIXTURES): Promise<void> {
  for (const f of files) {
    const target = path.join(inputDir, 'quotes', f);
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(fixture(`sec/quotes/${f}`), target);
  }
}

export async function writeInput(inputDir: string, rel: string, content: string): Promise<void> {
  const target = path.join(inputDir, 'quotes', rel);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, content);
}

export async function ingestQuotes(config: Config, inputDir: string) {
  return runPipelineInProcess(quotesPipeline, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
}

/**
 * Polygon aggregates results: `first`, then plain filler bars of many tickers until the response passes the size
 * from which a Polygon file is read by DuckDB, not parsed in JS (POLYGON_SNIFF_MIN_BYTES).
 */
export function polygonResultsPastSniffSize(first: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const results = [...first];
  const day0 = Date.UTC(2016, 0, 4, 5);
  for (let i = 0; results.length * 110 < POLYGON_SNIFF_MIN_BYTES * 1.1; i++) {
    const p = 10 + (i % 997) / 7;
    results.push({
      T: `F${Math.floor(i / 1000)}`,
      v: 1000 + i,
      vw: p + 0.0000015,
      o: p,
      c: p + 0.01,
      h: p + 0.02,
      l: p - 0.02,
      t: day0 + (i % 1000) * 86_400_000,
      n: i % 50,
    });
  }
  return results;
}
