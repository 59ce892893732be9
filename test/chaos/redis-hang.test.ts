/**
 * Chaos: a Redis that stops answering without closing its socket (SIGSTOP,
 * like a network black hole), and a Redis restarted, under a real API server
 * process (issue 25). Metered answers keep flowing within 1 s (the counter's
 * deadline is 250 ms, then its circuit stays open and requests count in
 * memory), /api/health answers degraded naming Redis, and once Redis is back
 * counting returns to it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/env.ts';
import { HAS_REDIS_SERVER, type RedisProcess, startRedis, stopRedis } from '../helpers/redis-process.ts';
import { exited, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

/** GET with a client-side bound, so a hang fails the test instead of stalling it. */
async function timedGet(url: string, boundMs = 1000): Promise<{ status: number; ms: number; body: any; headers: Headers }> {
  const t0 = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(boundMs) });
  const body = await res.json();
  return { status: res.status, ms: performance.now() - t0, body, headers: res.headers };
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe.skipIf(!HAS_REDIS_SERVER)('chaos: Redis paused and restarted under load', () => {
  let dir: string;
  let redis: RedisProcess;
  let server: ServerProcess;
  beforeAll(async () => {
    dir = await tempDir();
    redis = await startRedis();
    server = await startServerProcess(dir, { REDIS_URL: redis.url, RATE_LIMIT_FREE_PER_HOUR: '1000000' });
  }, 180_000);
  afterAll(async () => {
    server?.proc.kill('SIGTERM');
    if (server) await exited(server.proc);
    await stopRedis(redis);
    await removeDir(dir);
  });

  it('keeps answering within 1 s while Redis is stopped with SIGSTOP, health degraded naming Redis, and recovers on SIGCONT', async () => {
    // A metered route (an unknown /api path is counted, then answered 404): every answer carries RateLimit headers.
    const url = `${server.url}/api/no-such-route`;
    const first = await timedGet(url, 5000);
    expect(first.status).toBe(404);
    expect(first.headers.get('ratelimit-remaining')).not.toBeNull();
    expect((await timedGet(`${server.url}/api/health`, 5000)).body.dependencies.redis).toBe('up');

    // Load running when Redis stops: 5 clients sending back to back for 3 s, Redis stopped 0.5 s in.
    const latencies: number[] = [];
    const statuses = new Set<number>();
    const end = Date.now() + 3000;
    const load = Promise.all(
      Array.from({ length: 5 }, async () => {
        while (Date.now() < end) {
          const a = await timedGet(url);
          latencies.push(a.ms);
          statuses.add(a.status);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
    redis.proc.kill('SIGSTOP');
    await load;
    expect([...statuses]).toEqual([404]);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    expect(latencies.length).toBeGreaterThan(20);
    const health = await timedGet(`${server.url}/api/health`);
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('degraded');
    expect(['slow', 'down']).toContain(health.body.dependencies.redis);
    expect(health.body.reasons.join(' ')).toMatch(/redis/);
    expect(health.body.dependency_detail.redis.counted_in_memory).toBeGreaterThan(0);

    redis.proc.kill('SIGCONT');
    expect(
      await until(async () => {
        const h = await timedGet(`${server.url}/api/health`);
        await timedGet(url); // a request lets the breaker's trial call through
        // (The data directory has no snapshot, so health stays degraded for that reason alone.)
        return h.body.dependencies.redis === 'up' && h.body.dependency_detail.redis.state === 'closed';
      }),
    ).toBe(true);
  }, 180_000);

  it('keeps answering while Redis is killed and restarted under load, and counts in Redis again once it is back', async () => {
    const url = `${server.url}/api/no-such-route`;
    const port = redis.port;
    const statuses = new Map<number, number>();
    let running = true;
    const load = Promise.all(
      Array.from({ length: 5 }, async () => {
        while (running) {
          const a = await timedGet(url);
          statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    await stopRedis(redis);
    // 'down' once the server has seen the connection close (its event loop may be busy with the load above).
    expect(await until(async () => (await timedGet(`${server.url}/api/health`)).body.dependencies.redis === 'down')).toBe(true);
    redis = await startRedis(port);
    const client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
    const backInRedis = await until(async () => (await client.keys('proofline:rl:*')).length > 0, 20_000);
    running = false;
    await load;
    client.disconnect();
    expect(backInRedis).toBe(true);
    expect([...statuses.keys()]).toEqual([404]);
  }, 180_000);
});
