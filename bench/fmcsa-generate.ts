/**
 * Writes the full-scale FMCSA sample once under data/bench/fmcsa-full/ (gitignored):
 * `node --import tsx bench/fmcsa-generate.ts [scale]`. Reused by bench/fmcsa.bench.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSample } from '../jobs/sample.ts';
import { fmcsaSampleGenerator } from '../ingest/fmcsa/fmcsa.sample.ts';
import type { SampleScale } from '../ingest/sample/sample-kit.ts';

const scale = (process.argv[2] ?? 'full') as SampleScale;
export const FMCSA_BENCH_INPUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'data', 'bench', `fmcsa-${scale}`);
const t0 = Date.now();
const r = await ensureSample(FMCSA_BENCH_INPUT, {
  scale,
  seed: 42,
  generators: [fmcsaSampleGenerator],
  onFile: (_g, f, n) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)}s  #${n} ${f}`),
});
console.log(JSON.stringify({ ...r, seconds: (Date.now() - t0) / 1000 }));
