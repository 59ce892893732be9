/**
 * Helpers of the operations suites: real worker processes (`proofline worker`
 * with the test pipeline), tiny inputs, the execution log, polling.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Job, Queue } from 'bullmq';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/shared.ts';

export const TEST_PIPELINE_MODULE = path.join(REPO_ROOT, 'test/ops/fixtures/opstest.pipeline.ts');

/** A unique queue prefix per test, so suites never see each other's jobs. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

export interface WorkerProcess {
  proc: ChildProcess;
  pid: number;
  output(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  exited: Promise<number | null>;
}

// Every worker process a suite started, so none outlives the suite (even when a sibling failed to start).
const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

/** SIGKILLs every worker process this test file started and waits for them. */
export async function killAllWorkers(): Promise<void> {
  await Promise.all(
    [...started].map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve();
          p.once('exit', () => resolve());
          p.kill('SIGKILL');
        }),
    ),
  );
  started.clear();
}

/** Starts `node --import tsx jobs/cli/proofline.cli.ts worker` and resolves once it consumes its queues. */
export async function startWorkerProcess(env: Record<string, string>, args: string[] = ['--no-schedules']): Promise<WorkerProcess> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'jobs/cli/proofline.cli.ts'), 'worker', '--pipelines-module', TEST_PIPELINE_MODULE, ...args],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  started.add(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`worker did not start in 90 s:\n${out}`)), 90_000);
    const check = () => {
      if (/worker \d+ consuming/.test(out)) {
        clearTimeout(t);
        resolve();
      }
    };
    proc.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(t);
      reject(new Error(`worker exited with ${code} before starting:\n${out}`));
    });
  });
  return {
    proc,
    pid: proc.pid!,
    output: () => out,
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

/** Writes `items/<name>` files of `id,value` lines under `inputDir`. */
export async function writeItems(inputDir: string, files: Record<string, string>): Promise<void> {
  await mkdir(path.join(inputDir, 'items'), { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(inputDir, 'items', name), content);
}

/** Lines of `id,value` for ids [from, to). */
export function itemLines(from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += `${i},v${i}\n`;
  return s;
}

export interface ExecEntry {
  event: string;
  key: string | null;
  pid: number;
}

/** Parsed DATA_DIR/exec.log of the test pipeline, in write order. */
export async function readExecLog(dataDir: string): Promise<ExecEntry[]> {
  const text = await readFile(path.join(dataDir, 'exec.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const parts = l.split(' ');
      return parts.length === 3
        ? { event: parts[0]!, key: parts[1]!, pid: Number(parts[2]) }
        : { event: parts[0]!, key: null, pid: Number(parts[1]) };
    });
}

/** Polls `fn` until it returns a truthy value, or throws after `timeoutMs`. */
export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Waits for the job `id` of `queue` to complete and returns it as stored then
 * (its return value included); throws when it fails. The job is read again
 * after `getState` says completed: a copy read before it completed has no
 * return value.
 */
export async function waitForCompleted(queue: Queue, id: string, timeoutMs: number, what: string): Promise<Job> {
  return waitFor(
    async () => {
      const j = await queue.getJob(id);
      if (!j) return null;
      const state = await j.getState();
      if (state === 'failed') throw new Error(`${what} failed: ${j.failedReason}`);
      return state === 'completed' ? queue.getJob(id) : null;
    },
    timeoutMs,
    what,
  );
}
