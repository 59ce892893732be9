import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ParseError, SourceUnavailableError } from '../../lib/errors.ts';
import { silentLogger } from '../../lib/log.ts';
import { readCurrentManifest, readCurrentPointer } from '../../lib/warehouse/snapshot.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { runPipelineInProcess, RunFailedError } from '../../jobs/in-process.ts';
import type { Pipeline } from '../../jobs/pipeline.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

let root: string;
let inputDir: string;
beforeAll(async () => {
  root = await tempDir();
  inputDir = path.join(root, 'input');
  await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
});
afterAll(async () => removeDir(root));

describe('runPipelineInProcess (registry over the small sample)', () => {
  it('publishes companies, filings and the ticker lookup with origin leaves', async () => {
    const config = testConfig(path.join(root, 'data1'));
    const report = await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir });
    expect(report).toMatchObject({ skipped: false, failed_children: 0, rejects: 0 });
    const m = (await readCurrentManifest(config.dataDir, 'registry'))!;
    expect(m.tables.companies.rows).toBe(300);
    expect(m.tables.company_lookup.rows).toBeGreaterThanOrEqual(300);
    const reader = await SnapshotReader.open(config.dataDir, 'registry');
    const [aapl] = await reader.query(`SELECT l.status, c.origin FROM company_lookup l JOIN companies c USING (cik) WHERE l.ticker = $t`, {
      t: 'AAPL',
    });
    expect(aapl.status).toBe('active');
    expect(JSON.parse(String(aapl.origin))).toMatchObject({
      kind: 'record',
      source: 'sec-edgar/submissions',
      source_url: 'https://data.sec.gov/submissions/CIK0000320193.json',
    });
    const [jwn] = await reader.query(`SELECT status FROM company_lookup WHERE ticker = $t`, { t: 'JWN' });
    expect(jwn.status).not.toBe('active');
    await reader.close();
  });

  it('skips a run whose inputs equal those of the current snapshot, and is deterministic', async () => {
    const config = testConfig(path.join(root, 'data1'));
    const before = await readCurrentPointer(config.dataDir, 'registry');
    const again = await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir });
    expect(again.skipped).toBe(true);
    expect(await readCurrentPointer(config.dataDir, 'registry')).toEqual(before);
  });

  it('reproduces the same leaf hashes from the same bytes on a fresh warehouse', async () => {
    const a = testConfig(path.join(root, 'data1'));
    const b = testConfig(path.join(root, 'data-fresh'));
    await runPipelineInProcess(registryPipeline, { config: b, log: silentLogger, inputDir });
    const q = `SELECT origin_leaf_hash FROM companies ORDER BY cik`;
    const ra = await SnapshotReader.open(a.dataDir, 'registry');
    const rb = await SnapshotReader.open(b.dataDir, 'registry');
    expect(await rb.query(q)).toEqual(await ra.query(q));
    await ra.close();
    await rb.close();
  });

  it('rejects a malformed submissions file with file and position, and publishes the rest', async () => {
    const dir = path.join(root, 'bad-input');
    await cp(inputDir, dir, { recursive: true });
    const bad = path.join(dir, 'sec', 'submissions', 'CIK0000320193.json');
    const text = await readFile(bad, 'utf8');
    await writeFile(bad, text.slice(0, 5000));
    const config = testConfig(path.join(root, 'data2'));
    const report = await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir: dir, backoffMs: 1 });
    expect(report.failed_children).toBe(0);
    expect(report.rejects).toBe(1);
    const reader = await SnapshotReader.open(config.dataDir, 'registry');
    const rejects = await reader.query(`SELECT file, reason FROM rejects`);
    expect(rejects).toHaveLength(1);
    expect(String(rejects[0].file)).toMatch(/CIK0000320193\.json$/);
    expect(String(rejects[0].reason)).toMatch(/malformed JSON.*CIK0000320193\.json.*position \d+/);
    expect((await reader.query(`SELECT count(*)::INTEGER AS n FROM companies`))[0].n).toBe(299);
    await reader.close();
  });

  it('fails the whole run on a malformed required input without touching the published snapshot', async () => {
    const config = testConfig(path.join(root, 'data1'));
    const before = await readCurrentPointer(config.dataDir, 'registry');
    const dir = path.join(root, 'bad-tickers');
    await cp(inputDir, dir, { recursive: true });
    await writeFile(path.join(dir, 'sec', 'tickers', 'company_tickers_exchange.json'), '{"fields": ["cik"], "data": [[1,');
    await expect(runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir: dir, backoffMs: 1 })).rejects.toThrow(
      RunFailedError,
    );
    expect(await readCurrentPointer(config.dataDir, 'registry')).toEqual(before);
  });
});

describe('runPipelineInProcess retry policy', () => {
  const calls: Record<string, number> = {};
  const testPipeline: Pipeline = {
    domain: { domain: 'retrytest', tablesSql: 'CREATE TABLE IF NOT EXISTS t (k VARCHAR);' },
    async plan() {
      return {
        inputDigest: String(Math.random()),
        children: [
          { step: 'flaky', key: 'flaky', data: { k: 'flaky' } },
          { step: 'broken', key: 'broken', data: { k: 'broken' } },
        ],
      };
    },
    steps: {
      flaky: {
        payload: z.object({ k: z.string() }),
        async process(ctx) {
          calls.flaky = (calls.flaky ?? 0) + 1;
          if (calls.flaky < 3) throw new SourceUnavailableError('temporarily down');
          await ctx.run.writeRows('t', ctx.data.k, [{ k: ctx.data.k }]);
          return { rows: 1, rejects: 0 };
        },
      },
      broken: {
        payload: z.object({ k: z.string() }),
        async process() {
          calls.broken = (calls.broken ?? 0) + 1;
          throw new ParseError('bad bytes', { file: 'broken.csv', line: 7 });
        },
      },
    },
  };

  it('retries transient errors with backoff and never retries parse errors', async () => {
    const config = testConfig(path.join(root, 'data3'));
    const report = await runPipelineInProcess(testPipeline, { config, log: silentLogger, attempts: 3, backoffMs: 1 });
    expect(calls).toEqual({ flaky: 3, broken: 1 });
    expect(report.children.find((c) => c.key === 'broken')).toMatchObject({
      status: 'failed',
      error_kind: 'parse',
      error: 'bad bytes (broken.csv, line 7)',
    });
    expect(report.children.find((c) => c.key === 'flaky')).toMatchObject({ status: 'completed', rows: 1 });
    expect(report.snapshot_id).toBeTruthy();
  });
});
