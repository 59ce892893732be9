/**
 * The byte writers of the hot path (service/platform/bytes.ts): each must write
 * exactly the text it replaces.
 */
import { describe, expect, it } from 'vitest';
import { allocBody, releaseBody, formatMs, msLength, uintLength, writeMs, writeUint } from '../../service/platform/bytes.ts';

const INTS = [
  0,
  1,
  9,
  10,
  11,
  99,
  100,
  101,
  999,
  1000,
  65_535,
  999_999,
  1_000_000,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 + 7,
  1_795_000_000_123,
  Number.MAX_SAFE_INTEGER,
];

describe('writeUint', () => {
  it('writes String(n) for non-negative safe integers, and returns the end', () => {
    for (const n of INTS) {
      const buf = new Uint8Array(40).fill(35);
      const end = writeUint(buf, 3, n);
      expect(end - 3).toBe(uintLength(n));
      expect(Buffer.from(buf).toString('latin1')).toBe(`###${String(n)}${'#'.repeat(40 - 3 - String(n).length)}`);
    }
  });

  it('is exact at every power of ten and its neighbours, at 2^31, and over a sweep of 13-digit timestamps', () => {
    const ns: number[] = [2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2_000_000_005, 1_000_000_000_000 + 7];
    for (let e = 0; e <= 15; e++) for (const d of [-1, 0, 1]) if (10 ** e + d >= 0) ns.push(10 ** e + d);
    for (let i = 0; i < 2000; i++) ns.push(1_795_000_000_000 + i * 7_919_993);
    const buf = new Uint8Array(20);
    for (const n of ns) {
      const end = writeUint(buf, 2, n);
      expect([uintLength(n), Buffer.from(buf.subarray(2, end)).toString('latin1')]).toEqual([String(n).length, String(n)]);
    }
  });
});

describe('formatMs / writeMs', () => {
  it('gives milliseconds with three decimals, rounded to the microsecond; 0 for negative or non-finite', () => {
    expect([0, 0.0004, 0.0005, 0.042, 1.9995, 12.5, 1234.5678, -3, Number.NaN, Number.POSITIVE_INFINITY].map(formatMs)).toEqual([
      '0.000',
      '0.000',
      '0.001',
      '0.042',
      '2.000',
      '12.500',
      '1234.568',
      '0.000',
      '0.000',
      '0.000',
    ]);
  });

  it('writes the same bytes as formatMs, msLength long', () => {
    for (let i = 0; i < 2000; i++) {
      const ms = i < 1000 ? i / 997 : Math.exp(i / 120) / 1000;
      const buf = new Uint8Array(40);
      const end = writeMs(buf, 1, ms);
      expect(Buffer.from(buf.subarray(1, end)).toString('latin1')).toBe(formatMs(ms));
      expect(msLength(ms)).toBe(formatMs(ms).length);
    }
  });
});

describe('allocBody', () => {
  it('hands out views that never overlap, including across slabs and for large bodies', () => {
    const views = Array.from({ length: 400 }, (_, i) => allocBody(1 + ((i * 977) % 5000)));
    views.push(allocBody(100_000));
    for (const [i, v] of views.entries()) v.fill(i % 251);
    for (const [i, v] of views.entries()) expect(v.every((b) => b === i % 251)).toBe(true);
  });

  it('reuses the bytes of the last view handed back (releaseBody), never those of an older one', () => {
    const a = allocBody(100);
    const b = allocBody(200);
    releaseBody(a); // not the last one: ignored
    const c = allocBody(100);
    expect(c.byteOffset).not.toBe(a.byteOffset);
    releaseBody(c);
    const d = allocBody(50);
    expect([d.buffer, d.byteOffset]).toEqual([c.buffer, c.byteOffset]);
    b.fill(7);
    d.fill(9);
    expect(b.every((x) => x === 7)).toBe(true);
  });
});
