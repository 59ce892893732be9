/**
 * The single-writer lock of a domain's warehouse (DuckDB allows one writer per
 * file; we also want one publisher per domain). The lock is a file created with
 * O_EXCL holding the owner's host and pid. A lock whose process is gone (same
 * host) is stale and taken over, so a kill -9 during publish never wedges the
 * next run. Across machines, the BullMQ runner additionally serialises publish
 * jobs through their deterministic job id.
 */
import { hostname } from 'node:os';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { writerLockPath } from './layout.ts';

export interface LockInfo {
  host: string;
  pid: number;
  acquired_at: string;
  run_id: string;
}

/** Whether a process with this pid exists on this host (EPERM: it does, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Acquires the domain writer lock, waiting up to `timeoutMs`. Returns a release function. */
export async function acquireWriterLock(dataDir: string, domain: string, runId: string, timeoutMs = 60_000): Promise<() => Promise<void>> {
  const file = writerLockPath(dataDir, domain);
  await mkdir(path.dirname(file), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  const me: LockInfo = { host: hostname(), pid: process.pid, acquired_at: new Date().toISOString(), run_id: runId };
  for (;;) {
    try {
      const fh = await open(file, 'wx');
      await fh.writeFile(JSON.stringify(me));
      await fh.sync();
      await fh.close();
      return async () => {
        const cur = await readLock(file);
        if (cur && cur.pid === me.pid && cur.host === me.host) await rm(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = await readLock(file);
      if (!holder || (holder.host === me.host && !processAlive(holder.pid))) {
        await rm(file, { force: true }); // stale: its owner died
        continue;
      }
      if (Date.now() > deadline) throw new Error(`warehouse ${domain} is locked by ${holder.host}:${holder.pid} (run ${holder.run_id})`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function readLock(file: string): Promise<LockInfo | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as LockInfo;
  } catch {
    return null;
  }
}
