/**
 * Incremental quotes nights (issue 18, item 6; jobs/quotes/quote-input-parts.ts): the quotes sample at
 * BENCH_QUOTES_INC_SCALE (medium: 2,000 companies × 750 trading days, raw and adjusted, ~40 files; small for a
 * quick look; never full here) ingested in process by the real pipeline, then
 *
 *   full        every input parsed (a fresh warehouse)
 *   one-changed one close changed in one raw file: that file parsed, every other input's parts reused
 *   no-change   nothing changed, run forced: nothing parsed (without --force the run is skipped outright)
 *   full-again  the same inputs with `full` (every input parsed again): what the one-changed night replaces
 *
 * Each: seconds (plan, parse, publish), files parsed / reused, peak RSS, publish phases. Result:
 * bench/results/quotes-incremental.json.
 */
import { readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { quotesPipeline } from '../jobs/quotes/quotes.pipeline.ts';
import { ensureSample } from '../jobs/sample.ts';
import { quotesSampleGenerator } from '../ingest/quotes/quotes.sample.ts';
import type { SampleScale } from '../ingest/sample/sample-kit.ts';
import { linkTree, measurePipelineRun, writeResult } from './bench-kit.ts';

const SCALE = (process.env.BENCH_QUOTES_INC_SCALE ?? 'medium') as SampleScale;
if (SCALE === 'full') throw new Error('quotes-incremental runs at small or medium scale only');
const CONCURRENCY = Number(process.env.BENCH_QUOTES_INC_CONCURRENCY ?? 3);
const sampleDir = path.resolve('data', 'bench', 'quotes-incremental', 'sample', SCALE);
const root = path.resolve('data', 'bench', 'quotes-incremental', 'run');
const inputDir = path.join(root, 'input');
const dataDir = path.join(root, 'data');

const g0 = Date.now();
const sample = await ensureSample(sampleDir, { scale: SCALE, seed: 42, generators: [quotesSampleGenerator] });
console.log(sample.generated ? `sample: ${sample.files} files in ${((Date.now() - g0) / 1000).toFixed(1)} s` : 'sample: reused');

await rm(root, { recursive: true, force: true });
const files = await linkTree(sampleDir, inputDir);
const config = loadConfig({
  ...process.env,
  DATA_DIR: dataDir,
  INPUT_DIR: inputDir,
  LOG_LEVEL: 'warn',
  WORKER_CONCURRENCY: String(CONCURRENCY),
});
const log = createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn');

const measure = (name: string, opts: { full?: boolean }) =>
  measurePipelineRun(quotesPipeline, name, { config, log, inputDir, concurrency: CONCURRENCY, full: opts.full });

const runs = [];
runs.push(await measure('full', { full: true }));
// One close changed in the first raw file (unlinked first: the sample's copy stays as generated).
const changed = path.join(inputDir, 'quotes', 'alpaca-sdk', 'bars-raw-000.csv');
const lines = (await readFile(changed, 'utf8')).split('\n');
const cells = lines[10].split(',');
cells[5] = String(Number(cells[5]) + 1);
lines[10] = cells.join(',');
await unlink(changed);
await writeFile(changed, lines.join('\n'));
runs.push(await measure('one-changed', {}));
runs.push(await measure('no-change', {}));
runs.push(await measure('full-again', { full: true }));

const [full, one] = runs;
writeResult('quotes-incremental', {
  scale: SCALE,
  input_files: files,
  concurrency: CONCURRENCY,
  runs,
  one_changed_vs_full: Math.round((one.seconds / full.seconds) * 100) / 100,
});
