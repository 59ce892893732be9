/**
 * Registry ingest benchmark: the full-scale EDGAR sample (8,200 companies:
 * tickers, submissions, companyfacts, 10-K and 8-K documents, Forms 3/4,
 * daily index files, as `npm run sample -- --scale full` writes them) ingested
 * in process by the real registry pipeline (parse → parts → publish with the
 * derived layers). The sample is generated into data/bench/registry/input
 * (reused when complete). Target: within 3 minutes, peak RSS under 2 GB.
 * Options (env): BENCH_REGISTRY_SCALE (full), BENCH_REGISTRY_CONCURRENCY (2).
 * Result: bench/results/registry.json.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { runPipelineInProcess } from '../jobs/in-process.ts';
import { registryPipeline } from '../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../jobs/sample.ts';
import { edgarSampleGenerator } from '../ingest/edgar/edgar.sample.ts';
import type { SampleScale } from '../ingest/sample/sample-kit.ts';
import { COMPANY_COUNT } from '../ingest/sample/universe.ts';
import { trackPeakRss, writeResult } from './bench-kit.ts';

const SCALE = (process.env.BENCH_REGISTRY_SCALE ?? 'full') as SampleScale;
const CONCURRENCY = Number(process.env.BENCH_REGISTRY_CONCURRENCY ?? 2);
const root = path.resolve('data', 'bench', 'registry');
const inputDir = path.join(root, 'input', SCALE);
const dataDir = path.join(root, 'data');

const g0 = Date.now();
const sample = await ensureSample(inputDir, { scale: SCALE, seed: 42, generators: [edgarSampleGenerator] });
const generateMs = Date.now() - g0;
console.log(
  sample.generated
    ? `sample: ${sample.files} files, ${(sample.bytes / 1e6).toFixed(0)} MB in ${(generateMs / 1000).toFixed(1)} s`
    : 'sample: reused',
);

await rm(dataDir, { recursive: true, force: true });
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, INPUT_DIR: inputDir, LOG_LEVEL: 'warn' });
const rss = trackPeakRss();
const t0 = Date.now();
const report = await runPipelineInProcess(registryPipeline, {
  config,
  log: createLogger('warn'),
  inputDir,
  force: true,
  concurrency: CONCURRENCY,
});
const ms = Date.now() - t0;
const peak = rss.stop();
const current = JSON.parse(await readFile(path.join(dataDir, 'warehouse', 'registry', 'CURRENT'), 'utf8')) as { snapshot_id: string };
const manifest = JSON.parse(
  await readFile(path.join(dataDir, 'warehouse', 'registry', 'snapshots', current.snapshot_id, 'manifest.json'), 'utf8'),
) as { tables: Record<string, { rows: number }> };
const tables = Object.fromEntries(Object.entries(manifest.tables).map(([t, m]) => [t, m.rows]));
const published = Object.values(tables).reduce((a, b) => a + b, 0);
const result = {
  scale: SCALE,
  companies: COMPANY_COUNT[SCALE],
  input_files: sample.generated ? sample.files : null,
  concurrency: CONCURRENCY,
  duration_s: Math.round(ms / 100) / 10,
  rows_parsed: report.rows,
  rows_published: published,
  rows_per_s: Math.round(report.rows / (ms / 1000)),
  rejects: report.rejects,
  failed_children: report.failed_children,
  peak_rss_mb: peak,
  target: { duration_s: 180, peak_rss_mb: 2000 },
  met: ms <= 180_000 && peak < 2000,
  tables,
  sample_generation_s: sample.generated ? Math.round(generateMs / 100) / 10 : null,
};
console.log(JSON.stringify(result, null, 2));
writeResult('registry', result);
