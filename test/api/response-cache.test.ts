import { describe, expect, it } from 'vitest';
import { ResponseCache, type CachedResponse } from '../../service/platform/response-cache.ts';

const entry = (json: string): CachedResponse => ({
  status: 200,
  json,
  etag: 'W/"x"',
  ticker: null,
  link: null,
  contentType: 'application/json',
  hot: null,
});

describe('ResponseCache', () => {
  it('keeps at most maxEntries and evicts the oldest entry not read since (second chance)', () => {
    const c = new ResponseCache({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) c.set(k, entry(k), c.generation);
    expect(c.get('a')?.json).toBe('a'); // a read: survives the next eviction
    c.set('d', entry('d'), c.generation);
    expect(c.size).toBe(3);
    expect(c.get('b')).toBeUndefined(); // b was the oldest unread
    expect(['a', 'c', 'd'].map((k) => c.get(k)?.json)).toEqual(['a', 'c', 'd']);
    // Everything read: one pass clears the flags, then the oldest goes.
    c.set('e', entry('e'), c.generation);
    expect(c.size).toBe(3);
    expect(c.get('e')?.json).toBe('e');
  });

  it('stores nothing when off (maxEntries 0, config RESPONSE_CACHE_ENTRIES=0)', () => {
    const c = new ResponseCache({ maxEntries: 0 });
    c.set('a', entry('a'), c.generation);
    expect(c.size).toBe(0);
    expect(c.get('a')).toBeUndefined();
  });

  it('bounds the bytes held and never stores an entry over a quarter of the budget', () => {
    const c = new ResponseCache({ maxBytes: 10_000 });
    c.set('big', entry('x'.repeat(2000)), c.generation); // 4,000+ bytes as UTF-16: over 2,500
    expect(c.get('big')).toBeUndefined();
    for (let i = 0; i < 20; i++) c.set(`k${i}`, entry('y'.repeat(1000)), c.generation);
    expect(c.size).toBeLessThanOrEqual(4);
    expect(c.get('k19')).toBeDefined();
  });

  it('drops everything on clear and refuses a value computed before it', () => {
    const c = new ResponseCache();
    const gen = c.generation;
    c.set('a', entry('a'), gen);
    c.clear();
    c.set('b', entry('b'), gen);
    expect([c.get('a'), c.get('b'), c.size]).toEqual([undefined, undefined, 0]);
  });
});
