/**
 * tickerBuckets cuts a sorted group of quote bars into files at ticker boundaries (docs/quotes-and-transcripts.md,
 * "Serving layout"): every ticker in exactly one file, no file above BAR_FILE_ROWS unless one ticker alone is.
 */
import { describe, expect, it } from 'vitest';
import { BAR_ROW_GROUP } from '../../jobs/quotes/quotes-fold.ts';
import { BAR_FILE_ROWS, tickerBuckets } from '../../jobs/quotes/quotes.pipeline.ts';

const tickers = (n: number, rows: (i: number) => number) =>
  Array.from({ length: n }, (_, i) => ({ ticker: `T${String(i).padStart(5, '0')}`, n: rows(i) }));

describe('tickerBuckets', () => {
  it('covers every ticker once, in order, each file within the bound', () => {
    const counts = tickers(8200, (i) => 2520 * 2 - (i % 7) * 300); // full scale: raw and adjusted, 10 years
    const buckets = tickerBuckets(counts);
    const rows = new Map(counts.map((c) => [c.ticker, c.n]));
    let next = 0;
    for (const b of buckets) {
      let n = 0;
      expect(b.lo).toBe(counts[next].ticker);
      while (next < counts.length && counts[next].ticker <= b.hi) n += rows.get(counts[next++].ticker)!;
      expect(n).toBeLessThanOrEqual(BAR_FILE_ROWS);
    }
    expect(next).toBe(counts.length);
    expect(buckets.length).toBeGreaterThan(60);
  });

  it('keeps a ticker larger than the bound whole, in a file of its own', () => {
    const buckets = tickerBuckets([
      { ticker: 'A', n: 10 },
      { ticker: 'BIG', n: BAR_FILE_ROWS * 2 },
      { ticker: 'C', n: 10 },
    ]);
    expect(buckets).toEqual([
      { lo: 'A', hi: 'A' },
      { lo: 'BIG', hi: 'BIG' },
      { lo: 'C', hi: 'C' },
    ]);
  });

  it('cuts a small group into about 8 files of at least 4 row groups', () => {
    // 504,000 rows: files of at most 63,000 rows, 12 whole tickers each.
    expect(tickerBuckets(tickers(100, () => 5040))).toHaveLength(9);
    expect(tickerBuckets(tickers(10, () => 100))).toEqual([{ lo: 'T00000', hi: 'T00009' }]);
    expect(4 * BAR_ROW_GROUP).toBeLessThan(BAR_FILE_ROWS);
  });
});
