/**
 * Staging folders of killed in-process ingest runs are removed by the next
 * run at once (issue 25; they stayed 6 hours): a run whose owner process of
 * this host is dead goes, a run whose owner is alive stays, a run without an
 * owner record (BullMQ) stays until it is older than the age bound.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneStaging } from '../../lib/warehouse/snapshot.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const HOUR = 3600_000;

function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(String(r.stdout));
}

describe('pruneStaging', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(async () => removeDir(dir));

  async function stage(runId: string, owner: { host: string; pid: number } | null): Promise<void> {
    const staging = path.join(dir, 'warehouse', 'registry', 'staging');
    await mkdir(path.join(staging, runId, 'parts'), { recursive: true });
    if (owner) {
      await mkdir(path.join(staging, '.owners'), { recursive: true });
      await writeFile(path.join(staging, '.owners', `${runId}.json`), JSON.stringify({ ...owner, started_at: new Date().toISOString() }));
    }
  }

  it('removes a killed in-process run at once, keeps live, foreign-host and owner-less young runs', async () => {
    await stage('killed', { host: hostname(), pid: deadPid() });
    await stage('alive', { host: hostname(), pid: process.ppid });
    await stage('other-host', { host: `${hostname()}-elsewhere`, pid: deadPid() });
    await stage('bullmq', null);
    await stage('current', { host: hostname(), pid: deadPid() });
    const removed = await pruneStaging(dir, 'registry', 6 * HOUR, ['current']);
    expect(removed).toEqual(['killed']);
    const left = await readdir(path.join(dir, 'warehouse', 'registry', 'staging'));
    expect(left.sort()).toEqual(['.owners', 'alive', 'bullmq', 'current', 'other-host']);
    expect((await readdir(path.join(dir, 'warehouse', 'registry', 'staging', '.owners'))).sort()).toEqual([
      'alive.json',
      'current.json',
      'other-host.json',
    ]);
    expect(await pruneStaging(dir, 'registry', 0, [])).toEqual(expect.arrayContaining(['alive', 'bullmq', 'current', 'other-host']));
  });
});
