/**
 * A real API server child process (`service/main.ts` under tsx) on a given
 * DATA_DIR, on a free loopback port: for tests about what only separate
 * processes show (kill -9, file locks held by another process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './shared.ts';

export interface ServerProcess {
  proc: ChildProcess;
  url: string;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
}

/**
 * `command args` run under a soft descriptor limit of at least `fdLimit` (raised with `ulimit -Sn` in a bash
 * wrapper that then execs the command, so the child's pid is the command's): for tests holding thousands of sockets.
 */
export function withFdLimit(fdLimit: number, command: string, args: string[]): [string, string[]] {
  const script = `s=$(ulimit -Sn); if [ "$s" != unlimited ] && [ "$s" -lt ${fdLimit} ]; then ulimit -Sn ${fdLimit} || exit 97; fi; exec "$0" "$@"`;
  return ['bash', ['-c', script, command, ...args]];
}

/**
 * Starts the server and resolves with its URL once it prints that it listens (rejects if it exits first or takes
 * over 90 s). `fdLimit`: the least soft descriptor limit the server runs under (withFdLimit).
 */
export async function startServerProcess(
  dataDir: string,
  env: Record<string, string> = {},
  opts: { fdLimit?: number } = {},
): Promise<ServerProcess> {
  const args = ['--import', 'tsx', path.join(REPO_ROOT, 'service/main.ts')];
  const [command, argv] = opts.fdLimit ? withFdLimit(opts.fdLimit, process.execPath, args) : [process.execPath, args];
  const proc = spawn(command, argv, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ADMIN_TOKEN: 'test-admin-token',
      FMCSA_WEBKEY: '',
      REDIS_URL: '',
      DATABASE_URL: '', // the embedded state store unless a test asks for PostgreSQL
      WARMUP_MS: '3000', // the start-up warm-up runs, bounded well inside the 90 s start timeout below
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += String(d)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    // Import, readers, warm-up and a full collection, sometimes two servers at once on a slowed 2-core host.
    const t = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 90_000);
    proc.stdout!.on('data', (d) => {
      out += String(d);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
  return { proc, url, stderr: () => err };
}

/** Resolves once the child has exited (at once if it already has). */
export async function exited(proc: ChildProcess): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) await new Promise((r) => proc.once('exit', r));
}
