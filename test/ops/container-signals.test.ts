/**
 * The containers' commands stop cleanly (docs/operations.md#containers): the exact argv of the Dockerfile's CMD
 * (the API) and of docker-compose.yml's worker command are run here as local processes (no Docker engine needed;
 * `node` is this Node). SIGTERM to the worker while a job runs lets the job finish, then the worker exits 0;
 * SIGTERM to the API drains it and exits 0. The test pipeline comes in through WORKER_PIPELINES_MODULE, so the
 * command line is exactly the container's.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closeQueues, enqueueRun, getQueue, registerExtraPipelines } from '../../jobs/bullmq.ts';
import { jobIdFor } from '../../jobs/pipeline.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { REPO_ROOT } from '../helpers/shared.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { itemLines, readExecLog, TEST_PIPELINE_MODULE, uniquePrefix, waitFor, writeItems } from './ops-helpers.ts';

/** The exec-form argv of the Dockerfile's CMD. */
function dockerfileCmd(): string[] {
  const m = /^CMD (\[.*\])$/m.exec(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  return JSON.parse(m![1]!) as string[];
}

/** The exec-form argv of a compose service's `command`. */
function composeCommand(service: string): string[] {
  const text = readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
  const block = text.split(/\n {2}(?=\w[\w-]*:\n)/).find((b) => b.startsWith(`${service}:`))!;
  return JSON.parse(/command: (\[.*\])/.exec(block)![1]!) as string[];
}

function run(argv: string[], env: Record<string, string>) {
  expect(argv[0]).toBe('node');
  const proc = spawn(process.execPath, argv.slice(1), {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => proc.on('exit', (code, signal) => r({ code, signal })));
  return { proc, exited, output: () => out };
}

const dirs: string[] = [];
afterAll(async () => {
  await closeQueues();
  for (const d of dirs) await removeDir(d);
});

describe('the container commands', { timeout: 240_000 }, () => {
  it('are exec form node commands: no npm or shell between the container and node', () => {
    for (const argv of [dockerfileCmd(), composeCommand('api'), composeCommand('worker')]) {
      expect(argv[0]).toBe('node');
      expect(argv).toContain('jobs/cli/proofline.cli.ts');
    }
    expect(readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8').match(/^ +init: true$/gm)?.length).toBe(2);
  });

  it('the API command drains and exits 0 on SIGTERM', async () => {
    const dataDir = await tempDir('proofline-sig-api-');
    dirs.push(dataDir);
    const api = run(dockerfileCmd(), { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' });
    const url = await waitFor(
      async () => /listening on (http:\/\/\S+)/.exec(api.output())?.[1],
      120_000,
      `the API to listen:\n${api.output()}`,
    );
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
    api.proc.kill('SIGTERM');
    expect(await api.exited).toEqual({ code: 0, signal: null });
  });

  it.skipIf(!HAS_REDIS)('the worker command lets a running job finish on SIGTERM, then exits 0', async () => {
    const dataDir = await tempDir('proofline-sig-worker-');
    dirs.push(dataDir);
    const env = {
      REDIS_URL: REDIS_URL!,
      DATA_DIR: dataDir,
      QUEUE_PREFIX: uniquePrefix('sig'),
      WORKER_CONCURRENCY: '1',
      WORKER_PIPELINES_MODULE: TEST_PIPELINE_MODULE,
      OPS_TEST_SLOW_MS: '4000',
    };
    const worker = run(composeCommand('worker'), env);
    await waitFor(async () => /worker \d+ consuming/.test(worker.output()), 120_000, `the worker to start:\n${worker.output()}`);

    registerExtraPipelines([opstestPipeline]);
    const config = testConfig(dataDir, env);
    const inputDir = path.join(dataDir, 'input');
    await writeItems(inputDir, { 'slow-a.csv': itemLines(0, 10) });
    const { runId } = await enqueueRun(config, 'opstest', { inputDir });
    await waitFor(
      async () => (await readExecLog(dataDir)).some((e) => e.event === 'start' && e.key === 'slow-a.csv'),
      120_000,
      'the slow job to start',
    );
    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect((await readExecLog(dataDir)).some((e) => e.event === 'done' && e.key === 'slow-a.csv')).toBe(true);
    const job = await getQueue(config, 'opstest').getJob(jobIdFor('opstest', 'load', runId, 'slow-a.csv'));
    expect(await job!.getState()).toBe('completed');
  });
});
