/**
 * Hourly request counters per client: fixed one-hour windows aligned to the
 * clock hour (so `RateLimit-Reset` is the seconds to the next hour).
 * In memory for one process; in Redis when REDIS_URL is set, so several
 * server processes share one count (INCR + EXPIRE in one round trip).
 * If Redis fails, or does not answer within its deadline, counting falls back
 * to memory for that request (fail open: a Redis outage or a hung Redis must
 * not take the API down), and /api/health reports it. The deadline is a
 * circuit breaker (deadline.ts): after a missed deadline Redis is not asked
 * again for `openMs`, so a Redis stopped without closing its socket (SIGSTOP,
 * a network black hole) costs one request at most one deadline, then nothing.
 */
import type { Redis } from 'ioredis';
import { CircuitBreaker } from './deadline.ts';

export const WINDOW_SECONDS = 3600;

export interface RateCounter {
  /** Counts one request of `client` in the window starting at `windowStart` (epoch seconds); returns the count so far. */
  hit(client: string, windowStart: number): Promise<number> | number;
  close(): Promise<void>;
}

/** Process-local counters; windows older than the current one are dropped on rollover. */
export class MemoryRateCounter implements RateCounter {
  private window = -1;
  private counts = new Map<string, number>();

  hit(client: string, windowStart: number): number {
    if (windowStart !== this.window) {
      this.window = windowStart;
      this.counts = new Map();
    }
    const n = (this.counts.get(client) ?? 0) + 1;
    this.counts.set(client, n);
    return n;
  }

  async close(): Promise<void> {}
}

/** Redis counters, correct across processes: key `proofline:rl:<window>:<client>`. */
export class RedisRateCounter implements RateCounter {
  private readonly fallback = new MemoryRateCounter();
  /** Requests counted in memory because Redis failed or missed its deadline (reported by /api/health). */
  countedInMemory = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'proofline:rl:',
    readonly breaker = new CircuitBreaker('redis', { timeoutMs: 250 }),
  ) {}

  async hit(client: string, windowStart: number): Promise<number> {
    const key = `${this.prefix}${windowStart}:${client}`;
    try {
      const res = await this.breaker.run(() =>
        this.redis
          .multi()
          .incr(key)
          .expire(key, WINDOW_SECONDS + 60)
          .exec(),
      );
      const n = res?.[0]?.[1];
      if (typeof n === 'number') return n;
      throw new Error('unexpected INCR reply');
    } catch {
      this.countedInMemory++;
      return this.fallback.hit(client, windowStart);
    }
  }

  async close(): Promise<void> {}
}
