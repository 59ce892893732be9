import { execFile, spawnSync } from 'node:child_process';
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

  const sql = (args: string[], input?: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'jobs/cli/proofline.cli.ts', 'sql', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: path.join(root, 'data') },
      input: input ?? '',
      encoding: 'utf8',
    });

  it('prints CSV and JSON, capped by --max-rows with a line on stderr counting the rows left out', () => {
    const total = Number(sql(['--csv', 'SELECT count(*) AS n FROM registry.company_lookup']).stdout.split('\n')[1]);
    expect(total).toBeGreaterThan(5);
    const csv = sql(['--csv', '--max-rows', '3', 'SELECT ticker, status FROM registry.company_lookup ORDER BY ticker']);
    expect(csv.status).toBe(0);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe('ticker,status');
    expect(lines).toHaveLength(4);
    expect(csv.stderr).toContain(`${total - 3} more rows left out (--max-rows 3`);
    const json = sql(['--json', '--max-rows', '0', "SELECT ticker, 'a,\"b' AS q FROM registry.company_lookup"]);
    const rows = JSON.parse(json.stdout) as Array<{ ticker: string; q: string }>;
    expect(rows).toHaveLength(total);
    expect(rows[0]!.q).toBe('a,"b');
    expect(json.stderr).not.toContain('left out');
    expect(sql(['--csv', "SELECT 'a,\"b' AS q"]).stdout).toBe('q\n"a,""b"\n');
  });

  it('reads statements up to ; over several lines, and answers .tables and .schema TABLE', () => {
    const r = sql(
      ['--csv'],
      ".tables\n.schema registry.company_lookup\nSELECT ticker\n  FROM registry.company_lookup\n  WHERE ticker = 'AAPL';\n",
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('registry.company_lookup\n');
    expect(r.stdout).toMatch(/column_name,column_type,null/);
    expect(r.stdout).toMatch(/^ticker,VARCHAR/m);
    expect(r.stdout).toMatch(/ticker\nAAPL\n/);
    const bad = sql([], 'SELECT * FROM nope;\n');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('nope');
  });
});
