/**
 * A Redis lock with an owner token, renewed while held: `SET key token NX PX ttl`,
 * renewal and release only by the owner (compare-and-set Lua). The warehouse
 * writer lock (lib/warehouse/lock.ts) is a file created with O_EXCL whose
 * staleness check (is the owner pid alive?) works on one host only; workers on
 * several machines sharing DATA_DIR take this lock around publish first, so one
 * publisher per domain holds across machines. A holder that dies stops
 * renewing and the lock expires after `ttlMs`.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SourceUnavailableError } from '../lib/errors.ts';

const RENEW_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface HeldLock {
  token: string;
  /** False once renewal found the lock taken by someone else (expired while we were stuck). */
  held(): boolean;
  release(): Promise<void>;
}

/** Takes `key`, waiting up to `waitMs`; throws SourceUnavailableError (transient: the job retries) when still taken. */
export async function acquireRedisLock(
  redis: Redis,
  key: string,
  opts: { ttlMs?: number; waitMs?: number; owner?: string } = {},
): Promise<HeldLock> {
  const ttl = opts.ttlMs ?? 60_000;
  const token = `${opts.owner ?? process.pid}:${randomUUID()}`;
  const deadline = Date.now() + (opts.waitMs ?? 30_000);
  for (;;) {
    if ((await redis.set(key, token, 'PX', ttl, 'NX')) === 'OK') break;
    if (Date.now() > deadline) throw new SourceUnavailableError(`lock ${key} is held by ${await redis.get(key)}`, { lock: key });
    await new Promise((r) => setTimeout(r, 200));
  }
  let ok = true;
  const timer = setInterval(
    () => {
      redis.eval(RENEW_LUA, 1, key, token, ttl).then(
        (r) => {
          if (Number(r) !== 1) ok = false;
        },
        () => undefined,
      );
    },
    Math.max(100, Math.floor(ttl / 3)),
  );
  timer.unref();
  return {
    token,
    held: () => ok,
    async release() {
      clearInterval(timer);
      await redis.eval(RELEASE_LUA, 1, key, token).catch(() => undefined);
    },
  };
}

/** Runs `fn` holding `key`. */
export async function withRedisLock<T>(
  redis: Redis,
  key: string,
  fn: () => Promise<T>,
  opts?: { ttlMs?: number; waitMs?: number },
): Promise<T> {
  const lock = await acquireRedisLock(redis, key, opts);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
