/**
 * PostgreSQL for the state suites: DATABASE_URL from the environment (CI
 * starts a throwaway server, .ci/run). Without it, the PostgreSQL half of
 * each suite skips with a visible notice, except under REQUIRE_POSTGRES=1
 * where a missing or unreachable server fails. Each suite gets its own fresh
 * database (`freshDatabase`), dropped afterwards.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';

export const DATABASE_URL = process.env.DATABASE_URL || undefined;

async function reachable(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => undefined);
  }
}

export const HAS_POSTGRES = DATABASE_URL ? await reachable(DATABASE_URL) : false;
if (!HAS_POSTGRES) {
  if (process.env.REQUIRE_POSTGRES === '1')
    throw new Error(`REQUIRE_POSTGRES=1 but PostgreSQL is not reachable at ${DATABASE_URL ?? '(DATABASE_URL unset)'}`);
  console.warn('[proofline tests] no PostgreSQL (set DATABASE_URL): the PostgreSQL state suites are skipped');
}

/** Creates an empty database on DATABASE_URL's server; `drop` removes it (ending its sessions first). */
export async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `proofline_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(DATABASE_URL!, { max: 1, onnotice: () => undefined });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(DATABASE_URL!);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const a = postgres(DATABASE_URL!, { max: 1, onnotice: () => undefined });
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await a.end();
    },
  };
}

const execFileAsync = promisify(execFile);

/** A PostgreSQL server of a test's own (throwaway data directory, free loopback port) that the test may stop and start. */
export interface OwnCluster {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** The newest installed server's bin directory (Debian: /usr/lib/postgresql/<n>/bin), or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length ? path.join(root, versions.at(-1)!, 'bin') : null;
}

/**
 * initdb + pg_ctl start on a free port. initdb refuses to run as root: as
 * root the server runs as the `postgres` user (the Debian package creates it).
 */
export async function startOwnCluster(): Promise<OwnCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(path.join(tmpdir(), 'proofline-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  // Asynchronous: the test's own event loop keeps serving its HTTP clients while the server stops or starts.
  const run = (cmd: string, args: string[]) =>
    execFileAsync(asRoot ? 'runuser' : cmd, asRoot ? ['-u', 'postgres', '--', cmd, ...args] : args).then(() => undefined);
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const data = path.join(dir, 'data');
  await run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust']);
  const start = () =>
    run(path.join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      'start',
    ]);
  const stop = () => run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    destroy: async () => {
      await stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
