/**
 * The SEC request limiter shared by every process and machine.
 *
 * SEC fair access: at most 10 requests per second per user *in total*, across
 * all machines (default SEC_RATE_LIMIT=9 leaves headroom). An in-process token
 * bucket holds only inside one process, so with REDIS_URL every fetch of every
 * worker takes a slot from one Redis sliding-window log (a sorted set scored by
 * Redis server time, so machines with skewed clocks still agree): a request is
 * admitted only while fewer than `max` requests are in flight or finished
 * within the last `windowMs` (a slot counts until `windowMs` after its
 * response, so the limit holds as the server sees it, not only at admission). Over the rate, the SEC answers 403 "Request Rate Threshold
 * Exceeded" and blocks for 10 minutes; `pause()` stops every process for that
 * long (one key with a TTL that `acquire` respects).
 */
import { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { RateLimiter } from './http-client.ts';

/** How long the SEC blocks a client that went over the rate (and so how long we pause). */
export const SEC_PAUSE_MS = 10 * 60_000;

// KEYS[1] log zset, KEYS[2] pause key; ARGV: max, windowMs, member, holdMs.
// A slot is scored by when it stops counting against the window start: while the request is in
// flight its score is now + holdMs (a crashed holder frees it after that), and release() rescores
// it to the completion time. So a request occupies a slot from admission until windowMs after its
// response, and any `windowMs` the server looks at sees at most `max` requests, whatever the
// latency between admission and sending (cold processes, busy event loops).
// Returns 0 when admitted, else the milliseconds to wait before trying again.
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return paused end
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window + tonumber(ARGV[4]) + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now
if wait > window then wait = 20 end
if wait < 1 then wait = 1 end
return wait
`;

// Rescores an admitted slot to its completion time (only if it is still there).
const RELEASE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
`;

export interface PausableLimiter extends RateLimiter {
  /** Stops every holder of this limiter (in every process) for `ms`. */
  pause(ms: number, reason?: string): Promise<void>;
  /** Milliseconds left of a pause, 0 when not paused. */
  pausedFor(): Promise<number>;
  close?(): Promise<void>;
}

/** Sliding-window log limiter in Redis: at most `max` acquisitions in any `windowMs`, over all processes sharing `key`. */
export class RedisRateLimiter implements PausableLimiter {
  private seq = 0;
  private readonly id = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  constructor(
    private readonly redis: Redis,
    readonly opts: { key: string; max: number; windowMs?: number; holdMs?: number; ownsConnection?: boolean },
  ) {
    if (!(opts.max > 0)) throw new RangeError('max must be > 0');
    redis.defineCommand('prooflineAcquire', { numberOfKeys: 2, lua: ACQUIRE_LUA });
    redis.defineCommand('prooflineRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
  }

  private get pauseKey(): string {
    return `${this.opts.key}:paused`;
  }

  /** Waits for a slot; resolves with the release callback the HttpClient calls when the response is in. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    const cmd = this.redis as unknown as {
      prooflineAcquire(...a: unknown[]): Promise<number>;
      prooflineRelease(...a: unknown[]): Promise<number>;
    };
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const member = `${this.id}-${++this.seq}`;
      const wait = Number(
        await cmd.prooflineAcquire(
          this.opts.key,
          this.pauseKey,
          this.opts.max,
          this.opts.windowMs ?? 1000,
          member,
          this.opts.holdMs ?? 60_000,
        ),
      );
      if (wait === 0) {
        let released = false;
        return () => {
          if (released) return;
          released = true;
          void cmd.prooflineRelease(this.opts.key, member).catch(() => undefined);
        };
      }
      // Sleep until the oldest slot leaves the window (plus a little jitter so waiters do not stampede).
      await sleep(Math.min(wait, 5000) + Math.floor(Math.random() * 5), signal);
    }
  }

  async pause(ms: number, reason = 'paused'): Promise<void> {
    await this.redis.set(this.pauseKey, reason, 'PX', Math.max(1, Math.round(ms)));
  }

  async pausedFor(): Promise<number> {
    return Math.max(0, await this.redis.pttl(this.pauseKey));
  }

  async close(): Promise<void> {
    if (this.opts.ownsConnection) await this.redis.quit().catch(() => undefined);
  }
}

/**
 * In-process fallback with the same semantics as the Redis limiter (embedded mode: one process): a sliding-window
 * log in which a request holds its slot from admission until `windowMs` after its response (release), so any
 * window the server looks at sees at most `max` requests, whatever the jitter between admission and arrival. (An
 * evenly spaced token bucket at 10/s let the replay server count 11 arrivals within one second.)
 */
export class LocalPausableLimiter implements PausableLimiter {
  private pausedUntil = 0;
  /** Per slot: when it stops counting (Infinity while in flight). */
  private readonly slots: number[] = [];
  constructor(
    private readonly max: number,
    private readonly windowMs = 1000,
  ) {
    if (!(max > 0)) throw new RangeError('max must be > 0');
  }
  async acquire(signal?: AbortSignal): Promise<() => void> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const now = Date.now();
      const paused = this.pausedUntil - now;
      if (paused > 0) {
        await sleep(paused, signal);
        continue;
      }
      for (let i = this.slots.length - 1; i >= 0; i--) if (this.slots[i]! <= now) this.slots.splice(i, 1);
      if (this.slots.length < this.max) {
        this.slots.push(Infinity);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          const i = this.slots.indexOf(Infinity);
          if (i >= 0) this.slots[i] = Date.now() + this.windowMs;
        };
      }
      const soonest = Math.min(...this.slots);
      await sleep(Number.isFinite(soonest) ? Math.max(1, soonest - now) : 5, signal);
    }
  }
  async pause(ms: number): Promise<void> {
    this.pausedUntil = Date.now() + ms;
  }
  async pausedFor(): Promise<number> {
    return Math.max(0, this.pausedUntil - Date.now());
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Redis key of the SEC limiter for a queue prefix (one SEC budget per deployment). */
export function secLimiterKey(config: Pick<Config, 'QUEUE_PREFIX'>): string {
  return `${config.QUEUE_PREFIX}:limiter:sec`;
}

let shared: { key: string; limiter: PausableLimiter } | null = null;

/**
 * The SEC limiter of this process: Redis-backed (shared by every worker) when
 * REDIS_URL is set, else an in-process token bucket. EDGAR fetch steps pass it
 * to their HttpClient (`limiter`). One instance per process and configuration.
 */
export function getSecLimiter(config: Pick<Config, 'REDIS_URL' | 'SEC_RATE_LIMIT' | 'QUEUE_PREFIX'>): PausableLimiter {
  const key = `${config.REDIS_URL ?? 'local'}|${secLimiterKey(config)}|${config.SEC_RATE_LIMIT}`;
  if (shared?.key === key) return shared.limiter;
  const limiter = config.REDIS_URL
    ? new RedisRateLimiter(new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3, lazyConnect: false }), {
        key: secLimiterKey(config),
        max: config.SEC_RATE_LIMIT,
        ownsConnection: true,
      })
    : new LocalPausableLimiter(config.SEC_RATE_LIMIT);
  void shared?.limiter.close?.();
  shared = { key, limiter };
  return limiter;
}

/** Closes the process's shared SEC limiter (its Redis connection). */
export async function closeSecLimiter(): Promise<void> {
  const s = shared;
  shared = null;
  await s?.limiter.close?.();
}

/**
 * Whether a response is the SEC's rate-limit page (403 "Request Rate Threshold
 * Exceeded" / undeclared automated tool). A plain 403 for a missing
 * User-Agent is not (retrying it without fixing the UA would not help).
 */
export function isSecRateLimitPage(status: number, body: string): boolean {
  return status === 403 && /Request Rate Threshold Exceeded|undeclared automated tool|exceeded the rate/i.test(body);
}

/**
 * `transientResponse` hook for an EDGAR HttpClient: the rate-limit page pauses
 * the shared limiter (every process) for 10 minutes. It returns null, so the
 * client fails at once with a SourceUnavailableError carrying `status: 403`
 * instead of sleeping 10 minutes inside a job; the BullMQ runner then hands the
 * job back to the SEC queue and rate-limits that queue for the pause.
 */
export function secTransientResponse(
  limiter: PausableLimiter,
  pauseMs: number = SEC_PAUSE_MS,
): (status: number, body: string) => number | null {
  return (status, body) => {
    if (isSecRateLimitPage(status, body)) void limiter.pause(pauseMs, 'sec-403-rate-limit');
    return null;
  };
}
