/**
 * A redis-server of a test's own (chaos suites pause, kill and restart it, so
 * it cannot be the shared CI Redis): started as a child on a free loopback
 * port, no persistence. `HAS_REDIS_SERVER` is false when the binary is
 * missing; such suites skip unless REQUIRE_REDIS=1.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';

export const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;
if (!HAS_REDIS_SERVER && process.env.REQUIRE_REDIS === '1') throw new Error('REQUIRE_REDIS=1 but redis-server is not installed');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface RedisProcess {
  port: number;
  url: string;
  proc: ChildProcess;
}

/** Starts redis-server on `port` (a free one by default) and resolves once it accepts connections. */
export async function startRedis(port?: number): Promise<RedisProcess> {
  const p = port ?? (await freePort());
  const proc = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100 && !(await listening(p)); i++) await new Promise((r) => setTimeout(r, 50));
  return { port: p, url: `redis://127.0.0.1:${p}`, proc };
}

/** Stops it (SIGCONT first, in case it was paused) and waits for the exit. */
export async function stopRedis(r: RedisProcess): Promise<void> {
  if (r.proc.exitCode !== null || r.proc.signalCode !== null) return;
  const done = new Promise((res) => r.proc.once('exit', res));
  r.proc.kill('SIGCONT');
  r.proc.kill('SIGTERM');
  await done;
}
