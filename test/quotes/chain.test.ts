import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { hashCanonical, sha256Hex } from '../../lib/hash.ts';
import { createLeaf, createSourceLeaf, verifyChain, type OriginLeaf } from '../../lib/origin.ts';
import {
  chainBars,
  foldChainLeaves,
  foldChainLeavesBytes,
  leafTemplate,
  quoteDayLeaf,
  quoteLeaf,
  quoteLeafHash,
  QuoteChainFold,
  quoteRecord,
  quoteRecordSha256,
  type QuoteSource,
} from '../../ingest/quotes/chain.ts';
import { detectQuoteCsvFormat, parsePolygonAggs } from '../../ingest/quotes/formats.ts';
import type { QuoteBar } from '../../ingest/quotes/quote.schema.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

const src = { source: 'alpaca/bars-1day-adjusted', source_url: null, retrieved_at: null, content_sha256: 'a'.repeat(64) };
const bar = (d: string, close: number): QuoteBar => ({
  ticker: 'TEST',
  quote_date: d,
  adjustment: 'raw',
  open: 10,
  high: 11.5,
  low: 9.25,
  close,
  volume: 1000,
  vwap: 10.123456,
  trade_count: 12,
});

describe('leafTemplate', () => {
  it('hashes exactly like createLeaf (RFC 8785), with escapes and nulls', () => {
    for (const s of [src, { ...src, source_url: 'https://x.test/a?b="c"&d=\u00e9', retrieved_at: '2026-11-22T00:00:00.000Z' }]) {
      const t = leafTemplate(s);
      const parent = 'b'.repeat(64);
      const rec = 'c'.repeat(64);
      const ref = createLeaf({ kind: 'quote_day', ...s, record_sha256: rec, parent });
      expect(quoteLeafHash(t, parent, rec)).toBe(ref.leaf_hash);
      expect(t.source_leaf_hash).toBe(createSourceLeaf({ ...s, byte_size: 0 }).leaf_hash);
    }
  });
});

describe('foldChainLeaves (the per-file fold of the parse children)', () => {
  it('gives each day the leaf of createLeaf, chained from the source leaf, for plain and escaped sources', () => {
    const records = ['{"a":1}', '{"adjustment":"raw","close":10.5}', '{"ticker":"\u00c4"}', 'ÄÖ'];
    for (const s of [src, { ...src, source_url: 'https://x.test/a?b="c"&d=\u00e9\u2028', retrieved_at: '2026-11-22T00:00:00.000Z' }]) {
      const t = leafTemplate(s);
      let parent = createSourceLeaf({ ...s, byte_size: 0 }).leaf_hash;
      let want = '';
      for (const r of records) {
        parent = createLeaf({ kind: 'quote_day', ...s, record_sha256: sha256Hex(r), parent }).leaf_hash;
        want += parent;
      }
      // Twice: the second call reuses the template's bytes.
      expect(foldChainLeaves(t, records)).toBe(want);
      expect(foldChainLeaves(t, records)).toBe(want);
      expect(foldChainLeaves(t, [])).toBe('');
    }
    expect(() => foldChainLeaves(leafTemplate(src, false), records)).toThrow();
  });

  it('gives the same leaves from the texts as UTF-8 bytes joined by newlines (as DuckDB hands them over)', () => {
    const chains = [
      ['{"a":1}', '{"adjustment":"raw","close":10.5}', '{"ticker":"\u00c4"}', 'ÄÖ', '', '\u2028 \r x'],
      ['{"only":"one day"}'],
      [''],
      ['', ''],
      Array.from({ length: 2520 }, (_, i) => `{"close":${i / 7},"quote_date":"d${i}"}`),
    ];
    for (const s of [src, { ...src, source_url: 'https://x.test/a?b="c"&d=\u00e9', retrieved_at: '2026-11-22T00:00:00.000Z' }]) {
      const t = leafTemplate(s);
      for (const records of chains) {
        const joined = Buffer.from(records.join('\n'), 'utf8');
        // A view inside a larger buffer, as a vector's bytes may be.
        const inside = Buffer.concat([Buffer.from('xx\n'), joined, Buffer.from('\nyy')]).subarray(3, 3 + joined.length);
        expect(foldChainLeavesBytes(t, joined, records.length)).toBe(foldChainLeaves(t, records));
        expect(foldChainLeavesBytes(t, new Uint8Array(inside), records.length)).toBe(foldChainLeaves(t, records));
        expect(foldChainLeavesBytes(t, inside, records.length)).toBe(foldChainLeaves(t, records));
      }
      expect(() => foldChainLeavesBytes(t, Buffer.from('a\nb'), 1)).toThrow();
      expect(() => foldChainLeavesBytes(t, Buffer.from('a\nb'), 3)).toThrow();
    }
    expect(() => foldChainLeavesBytes(leafTemplate(src, false), Buffer.from('a'), 1)).toThrow();
  });
});

describe('quoteRecordSha256 and quoteLeaf (served answers rebuild every day with them)', () => {
  it('give the same hashes and leaf objects, member order included, as the generic RFC 8785 path', () => {
    const bars: QuoteBar[] = [
      bar('2026-01-02', 10.5),
      { ...bar('2026-01-05', 0.000001234), vwap: null, trade_count: null },
      { ...bar('2026-01-06', 1e21), volume: 123456789012, open: -0, high: 5e-7, low: 0.1 + 0.2 },
      { ...bar('2026-01-07', 187.12), ticker: 'BRK-B', adjustment: 'split_dividend', trade_count: 0 },
      // Values the fast text does not cover take the generic path: escapes, non-ASCII, lone surrogates.
      { ...bar('2026-01-08', 1), ticker: 'A"B\\C' },
      { ...bar('2026-01-09', 1), ticker: 'ÄÖ\u2028' },
    ];
    for (const b of bars) expect(quoteRecordSha256(b)).toBe(hashCanonical(quoteRecord(b)));
    // Generated numbers of every magnitude (exponent forms at both ends, negative, integral, many digits), nulls.
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const num = () => {
      const x = (rnd() - 0.3) * 10 ** Math.floor(rnd() * 50 - 25);
      return rnd() < 0.2 ? Math.round(x) : rnd() < 0.5 ? Number(x.toFixed(Math.floor(rnd() * 8))) : x;
    };
    for (let i = 0; i < 2000; i++) {
      const b: QuoteBar = {
        ...bar('2026-02-02', num()),
        open: num(),
        high: num(),
        low: num(),
        volume: num(),
        vwap: rnd() < 0.1 ? null : num(),
        trade_count: rnd() < 0.1 ? null : num(),
      };
      expect(quoteRecordSha256(b), JSON.stringify(b)).toBe(hashCanonical(quoteRecord(b)));
    }
    expect(() => quoteRecordSha256({ ...bar('2026-01-10', Number.NaN) })).toThrow();
    expect(() => quoteRecordSha256({ ...bar('2026-01-10', 1), ticker: '\ud800' })).toThrow();
    const sources = [
      src,
      { ...src, source_url: 'https://x.test/a?b="c"&d=\u00e9', retrieved_at: '2026-11-22T00:00:00.000Z' },
      { ...src, source_url: 'https://data.alpaca.markets/v2/stocks/bars?symbols=AAPL', retrieved_at: '2026-11-22T00:00:00.000Z' },
    ];
    for (const s of sources)
      for (const parent of ['b'.repeat(64), 'not-a-hash "quoted"']) {
        const rec = quoteRecordSha256(bars[0]!);
        const ref = createLeaf({ kind: 'quote_day', ...s, record_sha256: rec, parent });
        const leaf = quoteLeaf(s, parent, rec);
        expect(JSON.stringify(leaf)).toBe(JSON.stringify(ref));
      }
    // A source's leaf bytes are kept and rewritten per day: days of two sources interleaved, as a page with two
    // source files rebuilds them, each equal to createLeaf's.
    let parent = 'c'.repeat(64);
    for (let i = 0; i < 40; i++) {
      const s = sources[i % 3]!;
      const rec = quoteRecordSha256(bars[i % 4]!);
      const ref = createLeaf({ kind: 'quote_day', ...s, record_sha256: rec, parent });
      const leaf = quoteLeaf(s, parent, rec);
      expect(JSON.stringify(leaf)).toBe(JSON.stringify(ref));
      parent = leaf.leaf_hash;
    }
    // quoteDayLeaf (the served day from its bar) is quoteLeaf over quoteRecordSha256, generic-path bars included.
    for (const s of sources)
      for (const b of bars)
        for (const p of ['d'.repeat(64), 'not-a-hash "quoted"'])
          expect(JSON.stringify(quoteDayLeaf(s, p, b))).toBe(JSON.stringify(quoteLeaf(s, p, quoteRecordSha256(b))));
  });

  it('gives each new source object (one per answer) the leaf of its own values, however close to an earlier one', () => {
    // Sources differing in one value only, null against empty text, each rebuilt as a new object every round (the
    // leaf bytes are shared by value between objects): every leaf equal to createLeaf's for its own values.
    const variants: QuoteSource[] = [
      { ...src, source_url: null, retrieved_at: null },
      { ...src, source_url: '', retrieved_at: null },
      { ...src, source_url: null, retrieved_at: '' },
      { ...src, source_url: 'https://x.test/1', retrieved_at: '2026-11-22T00:00:00.000Z' },
      { ...src, source_url: 'https://x.test/1', retrieved_at: '2026-11-23T00:00:00.000Z' },
      { ...src, source_url: 'https://x.test/2', retrieved_at: '2026-11-23T00:00:00.000Z' },
      { ...src, source: 'alpaca/bars-adjusted', source_url: 'https://x.test/2', retrieved_at: '2026-11-23T00:00:00.000Z' },
      { ...src, content_sha256: 'e'.repeat(64), source_url: 'https://x.test/2', retrieved_at: '2026-11-23T00:00:00.000Z' },
    ];
    const rec = quoteRecordSha256(bar('2026-01-02', 10.5));
    const parent = 'f'.repeat(64);
    const hashes = new Set<string>();
    for (let round = 0; round < 3; round++)
      for (const v of variants) {
        const s = { ...v };
        const leaf = quoteLeaf(s, parent, rec);
        expect(JSON.stringify(leaf)).toBe(JSON.stringify(createLeaf({ kind: 'quote_day', ...s, record_sha256: rec, parent })));
        hashes.add(leaf.leaf_hash);
      }
    expect(hashes.size).toBe(variants.length);
  });
});

describe('chainBars', () => {
  it('links each day to the previous one and the first day to the source leaf', async () => {
    const chain = chainBars([bar('2024-01-03', 10.5), bar('2024-01-02', 10), bar('2024-01-04', 11)], src);
    expect(chain.map((c) => c.bar.quote_date)).toEqual(['2024-01-02', '2024-01-03', '2024-01-04']);
    expect(chain[0].leaf.parent).toBe(createSourceLeaf({ ...src, byte_size: 0 }).leaf_hash);
    expect(chain[1].leaf.parent).toBe(chain[0].leaf.leaf_hash);
    expect(chain[0].leaf.record_sha256).toBe(hashCanonical(quoteRecord(chain[0].bar)));
    const all = new Map<string, OriginLeaf>([
      ...chain.map((c) => [c.leaf.leaf_hash, c.leaf] as const),
      [createSourceLeaf({ ...src, byte_size: 0 }).leaf_hash, createSourceLeaf({ ...src, byte_size: 0 })],
    ]);
    const v = await verifyChain(chain[2].leaf.leaf_hash, (h) => all.get(h));
    expect(v).toMatchObject({ valid: true, problem: null });
    expect(v.leaves).toHaveLength(4);
  });

  it('is deterministic and changes from the corrected day onwards', () => {
    const a = chainBars([bar('2024-01-02', 10), bar('2024-01-03', 10.5), bar('2024-01-04', 11)], src);
    const b = chainBars([bar('2024-01-02', 10), bar('2024-01-03', 10.5), bar('2024-01-04', 11)], src);
    const c = chainBars([bar('2024-01-02', 10), bar('2024-01-03', 10.51), bar('2024-01-04', 11)], src);
    expect(b.map((x) => x.leaf.leaf_hash)).toEqual(a.map((x) => x.leaf.leaf_hash));
    expect(c[0].leaf.leaf_hash).toBe(a[0].leaf.leaf_hash);
    expect(c[1].leaf.leaf_hash).not.toBe(a[1].leaf.leaf_hash);
    expect(c[2].leaf.leaf_hash).not.toBe(a[2].leaf.leaf_hash);
  });
});

describe('QuoteChainFold', () => {
  it('gives superseded versions of a day the same parent (a fork) and continues from the current one', () => {
    const t = leafTemplate(src);
    const fold = new QuoteChainFold();
    const d1 = fold.next({ chain_start: true, day_start: true, current: true, template: t, record_sha256: '1'.repeat(64) });
    const old = fold.next({ chain_start: false, day_start: true, current: false, template: t, record_sha256: '2'.repeat(64) });
    const fixed = fold.next({ chain_start: false, day_start: false, current: true, template: t, record_sha256: '3'.repeat(64) });
    const d3 = fold.next({ chain_start: false, day_start: true, current: true, template: t, record_sha256: '4'.repeat(64) });
    expect(old.parent).toBe(d1.leaf_hash);
    expect(fixed.parent).toBe(d1.leaf_hash);
    expect(d3.parent).toBe(fixed.leaf_hash);
  });
});

describe('detectQuoteCsvFormat', () => {
  it('recognises both Alpaca layouts and rejects others with the file name', () => {
    expect(detectQuoteCsvFormat('Date,symbol,Open,High,Low,Close,Volume,Trades,VWAP', 'a.csv')).toMatchObject({
      format: 'alpaca-daily',
      adjustment: 'split_dividend',
    });
    expect(detectQuoteCsvFormat('timestamp,symbol,open,high,low,close,volume,vwap,trade_count\r', 'b.csv')).toMatchObject({
      format: 'alpaca-sdk',
      adjustment: 'raw',
    });
    expect(() => detectQuoteCsvFormat('date,price', 'c.csv')).toThrow(/c.csv|unrecognised/);
  });
});

describe.skipIf(!HAS_SHARED)('parsePolygonAggs on the real mocks', () => {
  it('maps o/h/l/c/v/vw/n/t to New York trading days', () => {
    const bytes = readFileSync(fixture('sec/quotes/polygon-mocks/v2__aggs__ticker__AAPL__range__1__day__2005-04-01__2005-04-04.json'));
    const p = parsePolygonAggs(bytes, 'aggs.json');
    expect(p.adjustment).toBe('split_dividend');
    expect(p.bars.map((b) => [b.quote_date, b.open, b.close, b.volume, b.vwap, b.trade_count])).toEqual([
      ['2005-04-01', 1.5032, 1.4604, 642646396, 1.469, 82132],
      ['2005-04-04', 1.4639, 1.4675, 578172308, 1.4589, 65543],
    ]);
    expect(sha256Hex(bytes)).toMatch(/^[a-f0-9]{64}$/);
  });
  it('reads the grouped response, whose results name their tickers', () => {
    const p = parsePolygonAggs(
      readFileSync(fixture('sec/quotes/polygon-mocks/v2__aggs__grouped__locale__us__market__stocks__2005-04-04_adjusted-true.json')),
      'g.json',
    );
    expect(p.bars).toEqual([expect.objectContaining({ ticker: 'GIK', quote_date: '2020-10-14', close: 10.02 })]);
  });
});
