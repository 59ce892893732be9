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

/** Starts the server and resolves with its URL once it prints that it listens (rejects if it exits first or takes over 30 s). */
export async function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'service/main.ts')], {
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
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr!.on('data', (d) => (err += String(d)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 30_000);
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
