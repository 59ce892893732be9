import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashCanonical } from '../../lib/hash.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import type { SampleFile } from '../../ingest/sample/sample-kit.ts';
import { ingestAll } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { REPO_ROOT } from '../helpers/shared.ts';

const run = promisify(execFile);

async function digestOf(files: Iterable<SampleFile> | AsyncIterable<SampleFile>): Promise<string> {
  const out: Array<[string, string]> = [];
  for await (const f of files)
    out.push([f.path, typeof f.content === 'string' ? f.content : Buffer.from(f.content as Uint8Array).toString('base64')]);
  return hashCanonical(out);
}

describe('sample generator', () => {
  it('is deterministic in scale and seed', async () => {
    const a = await digestOf(edgarSampleGenerator.generate({ scale: 'small', seed: 42 }));
    const b = await digestOf(edgarSampleGenerator.generate({ scale: 'small', seed: 42 }));
    const c = await digestOf(edgarSampleGenerator.generate({ scale: 'small', seed: 43 }));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });
});

describe('npm run sql', () => {
  let root: string;
  beforeAll(async () => {
    root = await tempDir();
    await ensureSample(path.join(root, 'in'), { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
    await ingestAll(testConfig(path.join(root, 'data')), [registryPipeline], path.join(root, 'in'));
  });
  afterAll(async () => removeDir(root));

  it('runs ad-hoc SQL over the current parquet snapshot and prints a table', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'jobs/cli/proofline.cli.ts', 'sql', "SELECT ticker, status FROM registry.company_lookup WHERE ticker = 'AAPL'"],
      { cwd: REPO_ROOT, env: { ...process.env, DATA_DIR: path.join(root, 'data') } },
    );
    expect(stdout).toContain('│ ticker │ status │');
    expect(stdout).toContain('│ AAPL   │ active │');
    expect(stdout).toContain('1 row');
  });

  it('exits non-zero with the DuckDB message on bad SQL', async () => {
    await expect(
      run(process.execPath, ['--import', 'tsx', 'jobs/cli/proofline.cli.ts', 'sql', 'SELECT * FROM nope'], {
        cwd: REPO_ROOT,
        env: { ...process.env, DATA_DIR: path.join(root, 'data') },
      }),
    ).rejects.toMatchObject({ code: 1 });
  });
});
