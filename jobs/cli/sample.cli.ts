/** `proofline sample [--scale small|medium|full] [--seed N] [--out DIR] [--force]` (alias `npm run sample -- …`): the deterministic sample data set. */
import path from 'node:path';
import { ensureSample } from '../sample.ts';
import { loadCliConfig } from './cli-kit.ts';

export async function runSample(opts: { scale?: string; seed?: string; out?: string; force?: boolean }): Promise<number> {
  const config = loadCliConfig({
    ...process.env,
    SAMPLE_SCALE: opts.scale ?? process.env.SAMPLE_SCALE,
    SAMPLE_SEED: opts.seed ?? process.env.SAMPLE_SEED,
  });
  const dir = opts.out ? path.resolve(opts.out) : path.join(config.dataDir, 'sample', config.SAMPLE_SCALE);
  const t0 = Date.now();
  let last = 0;
  const r = await ensureSample(dir, {
    scale: config.SAMPLE_SCALE,
    seed: config.SAMPLE_SEED,
    force: opts.force,
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
  return 0;
}
