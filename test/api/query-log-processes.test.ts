/**
 * The query log across API processes on one DATA_DIR: the process that owns
 * the log file counts every process's requests (the others log to memory and
 * hand each loaded spool file over), and it adopts the spool folder of a
 * process that died before handing its files over.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/shared.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { QueryLog, type QueryLogEntry } from '../../service/platform/query-log.ts';

const run = promisify(execFile);
const entry = (i: number, client = 'ip:owner'): QueryLogEntry => ({
  ts_ms: 1_795_000_000_000 + i,
  client,
  tier: 'free',
  agent_type: 'gptbot',
  method: 'GET',
  path: `/api/company/T${i}`,
  ticker: `T${i}`,
  status: 200,
  duration_ms: 1.5,
});
const COUNT = `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE client = 'ip:other')::INTEGER AS other FROM query_log`;

/** A second process: opens the same log, pushes `n` rows, reports what its own log holds, closes. */
async function logFromAnotherProcess(dir: string, file: string, n: number): Promise<{ where: string; n: number; pid: number }> {
  const script = path.join(dir, 'other-process.mts');
  await writeFile(
    script,
    `import { QueryLog } from ${JSON.stringify(path.join(REPO_ROOT, 'service/platform/query-log.ts'))};
const q = await QueryLog.open(process.argv[2]!, { flushMs: 60_000, spoolMs: 60_000 });
for (let i = 0; i < ${n}; i++) q.push({ ts_ms: 1_795_000_001_000 + i, client: 'ip:other', tier: 'free', agent_type: 'claudebot', method: 'GET', path: '/api/search?q=x', ticker: null, status: 200, duration_ms: 2 });
const [r] = await q.query('SELECT count(*)::INTEGER AS n FROM query_log');
await q.close();
console.log(JSON.stringify({ where: q.file, n: r!.n, pid: process.pid }));
`,
  );
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, file], { cwd: REPO_ROOT });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { where: string; n: number; pid: number };
}

describe('QueryLog across processes on one DATA_DIR', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('proofline-qlog-procs-');
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  it("counts the other process's rows in the owner's log, while the other counts its own", async () => {
    const file = path.join(dir, 'a', 'state', 'query-log.duckdb');
    const owner = await QueryLog.open(file, { flushMs: 60_000, spoolMs: 60_000 });
    for (let i = 0; i < 4; i++) owner.push(entry(i));
    const other = await logFromAnotherProcess(dir, file, 7);
    expect(other).toMatchObject({ where: ':memory:', n: 7 });
    expect(await owner.query(COUNT)).toEqual([{ n: 11, other: 7 }]);
    // Everything was handed over and loaded: no spool file and no fallback folder is left.
    expect(await readdir(path.dirname(file))).not.toContain(`query-log-spool-${other.pid}`);
    expect(await readdir(`${file}.spool`)).toEqual([]);
    await owner.close();
    // The rows are in the file: the next owner sees them.
    const again = await QueryLog.open(file, { flushMs: 60_000, spoolMs: 60_000 });
    expect(await again.query(COUNT)).toEqual([{ n: 11, other: 7 }]);
    await again.close();
  }, 60_000);

  it('adopts the spool folder of a fallback process that died, and leaves a live one alone', async () => {
    const file = path.join(dir, 'b', 'state', 'query-log.duckdb');
    const { stdout } = await run(process.execPath, ['-e', 'console.log(process.pid)']);
    const deadPid = Number(stdout.trim());
    const dead = path.join(dir, 'b', 'state', `query-log-spool-${deadPid}`);
    const live = path.join(dir, 'b', 'state', `query-log-spool-${process.pid}`);
    await mkdir(dead, { recursive: true });
    await mkdir(live, { recursive: true });
    const lines = [0, 1, 2].map((i) => JSON.stringify(entry(i, 'ip:other'))).join('\n');
    await writeFile(path.join(dead, `0000000000001-${deadPid}-000000.ndjson.open`), `${lines}\n`);
    await writeFile(path.join(live, `0000000000002-${process.pid}-000000.ndjson`), `${lines}\n`);
    const owner = await QueryLog.open(file, { flushMs: 60_000, spoolMs: 60_000 });
    expect(await owner.query(COUNT)).toEqual([{ n: 3, other: 3 }]);
    const left = await readdir(path.dirname(file));
    expect(left).not.toContain(`query-log-spool-${deadPid}`);
    expect(left).toContain(`query-log-spool-${process.pid}`);
    await owner.close();
  }, 60_000);
});
