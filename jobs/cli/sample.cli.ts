/** `npm run sample -- --scale small|medium|full --seed N [--out DIR] [--force]` */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { ensureSample } from '../sample.ts';

const { values } = parseArgs({
  options: { scale: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean', default: false } },
});
const config = loadConfig({
  ...process.env,
  SAMPLE_SCALE: values.scale ?? process.env.SAMPLE_SCALE,
  SAMPLE_SEED: values.seed ?? process.env.SAMPLE_SEED,
});
const dir = values.out ? path.resolve(values.out) : path.join(config.dataDir, 'sample', config.SAMPLE_SCALE);
const t0 = Date.now();
let last = 0;
const r = await ensureSample(dir, {
  scale: config.SAMPLE_SCALE,
  seed: config.SAMPLE_SEED,
  force: values.force,
  onFile: (gen, _f, n) => {
    if (Date.now() - last > 1000) {
      last = Date.now();
      process.stderr.write(`[sample] ${gen}: ${n} files\n`);
    }
  },
});
console.log(
  r.generated
    ? `wrote ${r.files} files (${(r.bytes / 1e6).toFixed(1)} MB) to ${dir} in ${((Date.now() - t0) / 1000).toFixed(1)} s`
    : `sample already complete in ${dir} (use --force to regenerate)`,
);
