/**
 * `npm run bench -- nightly [--full]`: what a night costs with incremental runs (issue 18, item 6). Three
 * registry runs, in process, over the EDGAR sample (tickers, submissions, companyfacts, 10-K/8-K documents,
 * Forms 3/4, daily index files):
 *
 *   1. full        every input parsed (`--full`), the snapshot records its input ledger;
 *   2. next day    ~1 % of the inputs changed (BENCH_NIGHTLY_CHANGE, default 0.01; every 100th submissions,
 *                  companyfacts or document file gets a trailing line, so its SHA-256 changes): only those
 *                  are parsed, the rest carried from the previous snapshot;
 *   3. no change   the same inputs again (forced: without --force the run is skipped by its input digest).
 *
 * Each run reports seconds, inputs parsed / reused / removed, peak RSS of this process, publish phase times.
 * Inputs are local files, so no HTTP request is made (requests: 0). Scale: medium (2,000 companies) by
 * default so it finishes in minutes on a shared 2-core machine; `--full` (or BENCH_NIGHTLY_SCALE=full) runs
 * the 8,200-company sample the target (a 1 % night within 20 % of a full run) is stated for.
 * The sample is generated into data/bench/registry/input/<scale> (shared with `npm run bench -- registry`)
 * and copied (hard links; a changed file is unlinked before it is written) to data/bench/nightly/input.
 * Result: bench/results/nightly.json.
 */
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { registryPipeline } from '../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../jobs/sample.ts';
import { edgarSampleGenerator } from '../ingest/edgar/edgar.sample.ts';
import type { SampleScale } from '../ingest/sample/sample-kit.ts';
import { COMPANY_COUNT } from '../ingest/sample/universe.ts';
import { linkTree, measurePipelineRun, writeResult } from './bench-kit.ts';

const SCALE = (process.argv.includes('--full') ? 'full' : (process.env.BENCH_NIGHTLY_SCALE ?? 'medium')) as SampleScale;
const CHANGE = Number(process.env.BENCH_NIGHTLY_CHANGE ?? 0.01);
const CONCURRENCY = Number(process.env.BENCH_NIGHTLY_CONCURRENCY ?? 2);
const sampleDir = path.resolve('data', 'bench', 'registry', 'input', SCALE);
const root = path.resolve('data', 'bench', 'nightly');
const inputDir = path.join(root, 'input');
const dataDir = path.join(root, 'data');

const g0 = Date.now();
const sample = await ensureSample(sampleDir, { scale: SCALE, seed: 42, generators: [edgarSampleGenerator] });
console.log(sample.generated ? `sample: ${sample.files} files in ${((Date.now() - g0) / 1000).toFixed(1)} s` : 'sample: reused');

await rm(root, { recursive: true, force: true });
await linkTree(sampleDir, inputDir);
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, INPUT_DIR: inputDir, LOG_LEVEL: 'warn' });
const log = createLogger('warn');

const measure = (name: string, opts: { full?: boolean }) =>
  measurePipelineRun(registryPipeline, name, { config, log, inputDir, concurrency: CONCURRENCY, full: opts.full });

/** The next day: `CHANGE` of the parsed inputs changed (every 1/CHANGE-th file in path order, deterministic). */
async function nextDay(): Promise<number> {
  const files: string[] = [];
  for (const e of await readdir(path.join(inputDir, 'sec'), { withFileTypes: true, recursive: true }))
    if (
      e.isFile() &&
      !e.name.endsWith('.meta.json') &&
      !e.parentPath.includes(`${path.sep}tickers`) &&
      !e.parentPath.includes(`${path.sep}index`)
    )
      files.push(path.join(e.parentPath, e.name));
  files.sort();
  const step = Math.max(1, Math.round(1 / CHANGE));
  let changed = 0;
  for (let i = step - 1; i < files.length; i += step) {
    const f = files[i]!;
    const bytes = await readFile(f);
    if (f.endsWith('.gz')) continue;
    // New bytes, same meaning (JSON and SGML/XML/HTML allow a trailing line): the file's SHA-256 changes.
    const next = Buffer.concat([bytes, Buffer.from('\n')]);
    await unlink(f);
    await writeFile(f, next);
    changed++;
  }
  return changed;
}

const full = await measure('full', { full: true });
const inputs = full.files_parsed ?? 0;
const changed = await nextDay();
const delta = await measure('next_day', {});
const none = await measure('no_change', {});
const ratio = Math.round((delta.seconds / full.seconds) * 1000) / 1000;
const result = {
  scale: SCALE,
  companies: COMPANY_COUNT[SCALE],
  inputs,
  inputs_changed: changed,
  change_fraction: Math.round((changed / Math.max(1, inputs)) * 10000) / 10000,
  concurrency: CONCURRENCY,
  runs: [full, delta, none],
  next_day_over_full: ratio,
  target: { next_day_over_full: 0.2, stated_at: 'full scale (8,200 companies)' },
  met: ratio <= 0.2,
};
console.log(JSON.stringify(result, null, 2));
// The medium run keeps its file; another scale writes beside it (nightly-full.json), so both stay on record.
writeResult(SCALE === 'medium' ? 'nightly' : `nightly-${SCALE}`, result);
