/**
 * Builds the metering dependencies from configuration (called by buildDeps in
 * service/main.ts): the UsageService with Redis counters when REDIS_URL is set
 * (memory otherwise), and a Redis liveness probe for /api/health.
 */
import { Redis } from 'ioredis';
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import { apiKeyRepositoryFor } from './api-keys.state.ts';
import type { StateStore } from './state.store.ts';
import { UsageService } from './usage.service.ts';

export interface UsageDeps {
  usage: UsageService;
  probes?: Record<string, () => Promise<boolean>>;
}

/** Opens the usage service; with REDIS_URL, one shared ioredis client (closed by usage.close()). */
export async function buildUsageDeps(config: Config, log: Logger, state?: StateStore | null): Promise<UsageDeps> {
  let redis: Redis | undefined;
  if (config.REDIS_URL) {
    // Never queue commands while disconnected: a down Redis must fail fast (metering falls back to memory, health says degraded).
    // commandTimeout: a Redis that keeps its socket open but stops answering (SIGSTOP, a black hole) rejects each
    // command after REDIS_COMMAND_TIMEOUT_MS instead of queueing it until Redis is back (issue 25).
    redis = new Redis(config.REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 2000,
      commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    });
    redis.on('error', (err) => log.debug({ err: err.message }, 'redis (metering) error'));
    await redis
      .connect()
      .catch((err) =>
        log.warn({ err: (err as Error).message }, 'redis unreachable at startup: counting requests in memory until it is back'),
      );
  }
  const usage = await UsageService.create({
    dataDir: config.dataDir,
    redis,
    log,
    freeHourlyLimit: config.RATE_LIMIT_FREE_PER_HOUR,
    proHourlyLimit: config.RATE_LIMIT_PRO_PER_HOUR,
    redisTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    keyRepository: apiKeyRepositoryFor(state), // PostgreSQL state: keys shared by every node
    lookupGuardPerHour: config.LOOKUP_GUARD_PER_HOUR,
    databaseUrl: config.DATABASE_URL, // the query log in PostgreSQL, shared by every node (rankings, stats)
  });
  if (redis) {
    const r = redis;
    usage.onClose(async () => {
      r.disconnect();
    });
    return { usage, probes: { redis: async () => (await r.ping()) === 'PONG' } };
  }
  return { usage };
}
