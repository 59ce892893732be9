/**
 * kill -9 in the middle of an ingest leaves the previous snapshot served and
 * intact; the next run completes (issue 2 acceptance).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/hash.ts';
import { silentLogger } from '../../lib/log.ts';
import { domainDir, snapshotDir, writerLockPath } from '../../lib/warehouse/layout.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest, readCurrentPointer } from '../../lib/warehouse/snapshot.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { REPO_ROOT } from '../helpers/shared.ts';

let root: string;
let inputDir: string;
let dataDir: string;
beforeAll(async () => {
  root = await tempDir();
  inputDir = path.join(root, 'input');
  dataDir = path.join(root, 'data');
  await ensureSample(inputDir, { scale: 'small', seed: 7, generators: [edgarSampleGenerator] });
  await runPipelineInProcess(registryPipeline, { config: testConfig(dataDir), log: silentLogger, inputDir });
});
afterAll(async () => removeDir(root));

function startIngest(): ChildProcess {
  return spawn(
    process.execPath,
    ['--import', 'tsx', 'jobs/cli/proofline.cli.ts', 'ingest', 'registry', '--force', '--full', '--input', inputDir],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dataDir, REDIS_URL: '', LOG_LEVEL: 'silent' },
      stdio: 'ignore',
    },
  );
}

/** Polls until `cond()` holds, then kills the child with SIGKILL. Returns whether the condition was reached before exit. */
async function killWhen(child: ChildProcess, cond: () => boolean, timeoutMs = 60_000): Promise<boolean> {
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + timeoutMs;
  let hit = false;
  while (Date.now() < deadline && child.exitCode === null) {
    if (cond()) {
      hit = true;
      child.kill('SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await exited;
  return hit;
}

async function assertIntact(expectedSnapshot: string): Promise<void> {
  const ptr = await readCurrentPointer(dataDir, 'registry');
  expect(ptr?.snapshot_id).toBe(expectedSnapshot);
  const m = (await readCurrentManifest(dataDir, 'registry'))!;
  for (const [t, info] of Object.entries(m.tables)) {
    const bytes = await readFile(path.join(snapshotDir(dataDir, 'registry', m.snapshot_id), 'tables', `${t}.parquet`));
    expect(sha256Hex(bytes), t).toBe(info.sha256);
  }
  const reader = await SnapshotReader.open(dataDir, 'registry');
  expect(await reader.query(`SELECT name FROM companies WHERE cik = $cik`, { cik: 320193 })).toEqual([{ name: 'Apple Inc.' }]);
  expect((await reader.query(`SELECT count(*)::INTEGER AS n FROM companies`))[0].n).toBe(m.tables.companies.rows);
  await reader.close();
}

const stagingHasParts = () => {
  const dir = path.join(domainDir(dataDir, 'registry'), 'staging');
  if (!existsSync(dir)) return false;
  return readdirSync(dir).some((run) => existsSync(path.join(dir, run, 'parts', 'companies')));
};

describe('kill -9 during ingest', () => {
  it('while parts are being written leaves the previous snapshot current and intact', async () => {
    const before = (await readCurrentPointer(dataDir, 'registry'))!.snapshot_id;
    const hit = await killWhen(startIngest(), stagingHasParts);
    expect(hit).toBe(true);
    await assertIntact(before);
  });

  it('while publishing (holding the writer lock) leaves the previous snapshot current and intact', async () => {
    const before = (await readCurrentPointer(dataDir, 'registry'))!.snapshot_id;
    const hit = await killWhen(startIngest(), () => existsSync(writerLockPath(dataDir, 'registry')));
    expect(hit).toBe(true);
    await assertIntact(before);
  });

  it('lets the next run take over the dead lock and complete', async () => {
    const before = (await readCurrentPointer(dataDir, 'registry'))!.snapshot_id;
    const report = await runPipelineInProcess(registryPipeline, { config: testConfig(dataDir), log: silentLogger, inputDir, force: true });
    expect(report.snapshot_id).toBeTruthy();
    expect(report.snapshot_id).not.toBe(before);
    await assertIntact(report.snapshot_id!);
    // The killed runs' staging folders were removed by this run (their process is dead), not left for 6 hours.
    const staging = path.join(domainDir(dataDir, 'registry'), 'staging');
    expect(readdirSync(staging).filter((n) => !n.startsWith('.'))).toEqual([]);
  });
});
