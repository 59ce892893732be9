/**
 * The `proofline` command, spawned as the real CLI (jobs/cli/proofline.cli.ts, the bin's target): `--help` on every
 * command and subcommand, exit codes 0/1/2, errors as one line without a stack trace, `jobs failed` failing when
 * jobs failed, and `ingest --wait` in Redis mode exiting with the run's outcome (real workers, real redis-server).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../jobs/cli/proofline.cli.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { REPO_ROOT } from '../helpers/shared.ts';
import { itemLines, killAllWorkers, startWorkerProcess, TEST_PIPELINE_MODULE, uniquePrefix, writeItems } from './ops-helpers.ts';

const execFileP = promisify(execFile);
const CLI = path.join(REPO_ROOT, 'jobs/cli/proofline.cli.ts');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function proofline(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileP(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** A stack frame line ("    at fn (file:line)"): never shown to an operator. */
const STACK = /^\s+at .+[:(]/m;

/** Every command path of the tree: ['ingest'], ['schedule', 'set'], … */
function commandPaths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

describe('proofline', { timeout: 300_000 }, () => {
  it('answers --help on the top level and on every command and subcommand with exit code 0', async () => {
    const top = await proofline(['--help']);
    expect(top.code).toBe(0);
    const paths = commandPaths(buildProgram(() => undefined));
    for (const name of [
      'ingest',
      'worker',
      'schedule',
      'jobs',
      'sample',
      'sql',
      'discover',
      'apikeys',
      'credits',
      'verify-receipts',
      'backfill',
      'eval',
    ])
      expect(top.stdout).toContain(`  ${name}`);
    // Sequential: the machine is small, and each run loads tsx.
    for (const p of paths) {
      const r = await proofline([...p, '--help']);
      expect(r.code, `${p.join(' ')} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout, p.join(' ')).toMatch(/usage: proofline/i);
      expect(r.stderr, p.join(' ')).not.toMatch(STACK);
    }
  });

  it('rejects a bad flag, a bad number, an unknown command and an unknown domain with exit code 2 and no stack trace', async () => {
    for (const args of [
      ['ingest', '--bogus'],
      ['worker', '--concurrency', 'many'],
      ['nosuch'],
      ['ingest', 'nodomain', '--in-process'],
      ['sql', '--csv', '--json', 'SELECT 1'],
      ['apikeys', 'create'],
    ]) {
      const r = await proofline(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).not.toMatch(STACK);
      expect(r.stderr.trim(), args.join(' ')).not.toBe('');
    }
    expect((await proofline(['ingest', 'nodomain', '--in-process'])).stderr).toContain('unknown domain nodomain; known: registry');
  });

  it('says Redis is unreachable (exit 1) and that a command needs REDIS_URL (exit 2), without a stack trace', async () => {
    const down = await proofline(['jobs', 'failed'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('Redis unreachable at redis://127.0.0.1:1');
    expect(down.stderr).not.toMatch(STACK);
    const unset = await proofline(['schedule', 'list']);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('needs REDIS_URL');
  });
});

describe.skipIf(!HAS_REDIS)('proofline ingest --wait and jobs failed (Redis mode)', { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await killAllWorkers();
    for (const d of dirs) await removeDir(d);
  });

  it('waits for the run and exits with its outcome; jobs failed exits 1 once a job failed and jobs inspect shows it', async () => {
    const dataDir = await tempDir('proofline-cli-wait-');
    dirs.push(dataDir);
    const env = { REDIS_URL: REDIS_URL!, DATA_DIR: dataDir, QUEUE_PREFIX: uniquePrefix('cli'), WORKER_CONCURRENCY: '1' };
    const extra = ['--pipelines-module', TEST_PIPELINE_MODULE];
    await startWorkerProcess(env);

    const goodInput = path.join(dataDir, 'good');
    await writeItems(goodInput, { 'a.csv': itemLines(0, 5), 'b.csv': itemLines(5, 9) });
    const good = await proofline(['ingest', 'opstest', '--wait', '--input', goodInput, ...extra], env);
    expect(good.code, good.stderr).toBe(0);
    const outcome = JSON.parse(good.stdout.trim().split('\n').at(-1)!) as { status: string; snapshot_id: string };
    expect(outcome.status).toBe('published');
    expect(outcome.snapshot_id).toBeTruthy();
    expect((await proofline(['jobs', 'failed', ...extra], env)).code).toBe(0);

    const badInput = path.join(dataDir, 'bad');
    await writeItems(badInput, { 'a.csv': `${itemLines(0, 3)}bad\n` });
    const bad = await proofline(['ingest', 'opstest', '--wait', '--input', badInput, ...extra], env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout.trim().split('\n').at(-1)!)).toMatchObject({ status: 'failed', stage: 'publish' });
    expect(bad.stderr).not.toMatch(STACK);

    const failed = await proofline(['jobs', 'failed', '--queue', 'opstest', ...extra], env);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('opstest:load:');

    const failedId = failed.stdout.trim().split('\n')[0]!.split('\t')[0]!;
    const inspected = await proofline(['jobs', 'inspect', failedId, ...extra], env);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(JSON.parse(inspected.stdout)).toMatchObject({ id: failedId, state: 'failed', return_value: null });
  });
});
