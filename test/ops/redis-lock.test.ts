/** The publish lock across machines: SET NX PX with an owner token, renewed while held, released only by its owner. */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireRedisLock, withRedisLock } from '../../jobs/redis-lock.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { uniquePrefix } from './ops-helpers.ts';

describe.skipIf(!HAS_REDIS)('acquireRedisLock', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL!);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('serialises holders: the second waits until the first releases', async () => {
    const key = `${uniquePrefix('lock')}:publish`;
    const order: string[] = [];
    await Promise.all([
      withRedisLock(redis, key, async () => {
        order.push('a+');
        await new Promise((r) => setTimeout(r, 300));
        order.push('a-');
      }),
      new Promise((r) => setTimeout(r, 50)).then(() =>
        withRedisLock(redis, key, async () => {
          order.push('b+');
          order.push('b-');
        }),
      ),
    ]);
    expect(order).toEqual(['a+', 'a-', 'b+', 'b-']);
    expect(await redis.exists(key)).toBe(0);
  });

  it('renews while held, so a long holder keeps the lock past its TTL', async () => {
    const key = `${uniquePrefix('renew')}:publish`;
    // Renewed every third of the TTL: a stall of this process under two thirds of it (1 s) keeps the lock.
    const lock = await acquireRedisLock(redis, key, { ttlMs: 1500 });
    await new Promise((r) => setTimeout(r, 4000));
    expect(await redis.get(key)).toBe(lock.token);
    expect(lock.held()).toBe(true);
    await lock.release();
  });

  it('fails with a transient error when the lock stays taken, and never releases a lock it does not own', async () => {
    const key = `${uniquePrefix('owner')}:publish`;
    await redis.set(key, 'someone-else', 'PX', 5000);
    await expect(acquireRedisLock(redis, key, { waitMs: 300 })).rejects.toMatchObject({ code: 'proofline:source-unavailable' });
    await redis.del(key);
    const a = await acquireRedisLock(redis, key, { ttlMs: 200 });
    await a.release();
    const b = await acquireRedisLock(redis, key, { ttlMs: 5000 });
    await a.release(); // a's token no longer matches: b keeps the lock
    expect(await redis.get(key)).toBe(b.token);
    await b.release();
  });
});
