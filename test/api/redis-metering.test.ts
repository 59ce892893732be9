/**
 * Hourly counters in Redis are shared by every server process: two
 * UsageService instances (standing in for two processes) count one client
 * together, and a Redis that goes away makes counting fall back to memory.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateCounter } from '../../service/platform/rate-counter.ts';
import { UsageService } from '../../service/platform/usage.service.ts';
import { silentLogger } from '../../lib/log.ts';
import { buildUsageDeps } from '../../service/platform/usage.deps.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';

describe.skipIf(!HAS_REDIS)('Redis hourly counters', () => {
  const dirs: string[] = [];
  const clients: Redis[] = [];
  const services: UsageService[] = [];
  const prefix = `proofline-test:${process.pid}:${Date.now()}:`;
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const dir = await tempDir();
      const redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
      dirs.push(dir);
      clients.push(redis);
      services.push(await UsageService.create({ dataDir: dir, redis, freeHourlyLimit: 5 }));
    }
  });
  afterAll(async () => {
    for (const s of services) await s.close();
    for (const c of clients) c.disconnect();
    for (const d of dirs) await removeDir(d);
  });

  it('counts one client across two processes and reports over-limit at the shared count', async () => {
    const now = Date.now();
    const id = services[0]!.identify(null, `10.0.0.${process.pid % 250}`, 'curl/8');
    const counts: number[] = [];
    for (let i = 0; i < 6; i++)
      counts.push((await services[i % 2]!.meter({ ...id, client: `${id.client}:${prefix}` }, now)).requests_this_hour);
    expect(counts).toEqual([1, 2, 3, 4, 5, 6]);
    const last = await services[0]!.meter({ ...id, client: `${id.client}:${prefix}` }, now);
    expect(last).toMatchObject({ requests_this_hour: 7, remaining: 0, over_limit: true });
  });

  it('falls back to counting in memory when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    const counter = new RedisRateCounter(dead, prefix);
    expect(await counter.hit('c', 0)).toBe(1);
    expect(await counter.hit('c', 0)).toBe(2);
    dead.disconnect();
  });
});

describe('buildUsageDeps Redis probe (for /api/health)', () => {
  it('reports a configured Redis that is down as down', async () => {
    const dir = await tempDir();
    const { usage, probes } = await buildUsageDeps(testConfig(dir, { REDIS_URL: 'redis://127.0.0.1:1' }), silentLogger);
    expect(await probes!.redis!().catch(() => false)).toBe(false);
    await usage.close();
    await removeDir(dir);
  });
  it.skipIf(!HAS_REDIS)('reports a reachable Redis as up', async () => {
    const dir = await tempDir();
    const { usage, probes } = await buildUsageDeps(testConfig(dir, { REDIS_URL: REDIS_URL! }), silentLogger);
    expect(await probes!.redis!()).toBe(true);
    await usage.close();
    await removeDir(dir);
  });
});
