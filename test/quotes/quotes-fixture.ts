/**
 * Builds a temporary quotes input tree over the real fixtures (copies in a temp dir, never
 * into the repo) and runs the quotes pipeline into a temp data dir.
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '../../lib/log.ts';
import type { Config } from '../../lib/config.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
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
