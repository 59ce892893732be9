/**
 * The chain heads record of a ticker is parsed once per served store and kept (lib/quote-heads.ts, issue 22 item 2:
 * the quote history page parsed it on every request). Over the small quotes sample: the answers of the quote
 * functions, of GET /api/company/{ticker}/quote/history and of MCP `sec_quote_history` are the same bytes on the
 * first read of a record (parsed, as before), on later reads (kept) and through the SQL path (no heads store); each
 * record is read once per store over several rounds; a new store identity reads again; the memo keeps at most its
 * limit of tickers; what it keeps is frozen. Counts and equality only, nothing timed.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import {
  QUOTE_HEADS_MEMO_TICKERS,
  QUOTE_HEADS_STORE,
  quoteHeadsMemoSize,
  readQuoteHeads,
  setQuoteHeadsMemoLimit,
} from '../../lib/quote-heads.ts';
import type { PackedStore } from '../../lib/warehouse/packed-store.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { getLatestQuote, getQuoteHistory } from '../../service/quotes/quotes.queries.ts';
import { buildTestService, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { answer, sqlOnly } from '../helpers/reader-variants.ts';

/**
 * The reader with its heads store seen through a wrapper that counts record reads (keys > 0; key 0 is the directory).
 * Each call gives a new wrapper, i.e. a new store identity, as a swap to a new snapshot does.
 */
function countingStore(reader: SnapshotReader): { reader: SnapshotReader; store: () => PackedStore; reads: () => number } {
  const real = reader.packed(QUOTE_HEADS_STORE)!;
  let reads = 0;
  const s = Object.create(real) as PackedStore;
  Object.defineProperty(s, 'get', {
    value: (key: number) => {
      if (key > 0) reads++;
      return real.get(key);
    },
  });
  const r = Object.create(reader) as SnapshotReader;
  Object.defineProperty(r, 'packed', { value: (name: string) => (name === QUOTE_HEADS_STORE ? s : reader.packed(name)) });
  return { reader: r, store: () => s, reads: () => reads };
}

describe('chain heads records kept per served store', () => {
  let root: string;
  let svc: TestService;
  let quotes: SnapshotReader;
  let tickers: string[];
  /** Tickers with both series (the history of the one not served by default is asked for too). */
  let both: string[];

  beforeAll(async () => {
    root = await tempDir('quote-heads-memo-');
    const input = path.join(root, 'input');
    await ensureSample(input, { scale: 'small', seed: 42, generators: [quotesSampleGenerator] });
    const config = testConfig(path.join(root, 'data'));
    await ingestAll(config, [quotesPipeline], input);
    svc = await buildTestService(config, ['quotes']);
    quotes = svc.deps.readers.quotes!;
    tickers = (await quotes.query(`SELECT DISTINCT ticker FROM quote_bars ORDER BY ticker`)).map((r) => String(r.ticker));
    both = (
      await quotes.query(`SELECT ticker FROM quote_bars GROUP BY ticker HAVING count(DISTINCT adjustment) = 2 ORDER BY ticker LIMIT 5`)
    ).map((r) => String(r.ticker));
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  /** Every answer the quote functions give of `t` that reads its heads record: pages, windows, cursors, series. */
  async function answersOf(reader: SnapshotReader, t: string): Promise<string[]> {
    const d = { quotes: reader };
    const first = await getQuoteHistory(d, t);
    const out = [
      await answer(() => getQuoteHistory(d, t)),
      await answer(() => getQuoteHistory(d, t, { limit: 5 })),
      await answer(() => getQuoteHistory(d, t, { limit: 40 })),
      await answer(() => getQuoteHistory(d, t, { from: first.chain.first_date, limit: 7 })),
      await answer(() => getLatestQuote(d, t)),
    ];
    if (first.next_cursor) out.push(await answer(() => getQuoteHistory(d, t, { cursor: first.next_cursor! })));
    for (const adjustment of ['raw', 'split_dividend'] as const) {
      out.push(await answer(() => getQuoteHistory(d, t, { adjustment, limit: 3 })));
      out.push(await answer(() => getLatestQuote(d, t, { adjustment })));
    }
    return out;
  }

  it('parses each record once over three rounds, answering the same bytes as the first read and the SQL path', async () => {
    expect(tickers.length).toBeGreaterThan(5);
    expect(both.length).toBeGreaterThan(0);
    const c = countingStore(quotes);
    const sql = sqlOnly(quotes);
    const some = [...new Set([...tickers.slice(0, 12), ...both])];
    for (const round of [1, 2, 3])
      for (const t of some) {
        // A fresh store identity each time: its first read parses the record, as every read did before the memo.
        const cold = countingStore(quotes).reader;
        const kept = await answersOf(c.reader, t);
        expect(kept, `${t} round ${round}`).toEqual(await answersOf(cold, t));
        expect(kept, `${t} round ${round}, SQL path`).toEqual(await answersOf(sql, t));
      }
    expect(c.reads()).toBe(some.length);
    expect(quoteHeadsMemoSize(c.store())).toBe(some.length);
    // An unknown ticker reads no record and keeps nothing.
    await expect(getQuoteHistory({ quotes: c.reader }, 'NO-SUCH-TICKER')).rejects.toThrow(/no quotes/);
    expect(c.reads()).toBe(some.length);
  });

  it('reads a record again for a new store identity (a swap), and keeps the old store apart', async () => {
    const a = countingStore(quotes);
    const b = countingStore(quotes);
    const t = tickers[0]!;
    for (let i = 0; i < 3; i++) await getQuoteHistory({ quotes: a.reader }, t);
    expect(a.reads()).toBe(1);
    for (let i = 0; i < 3; i++) await getQuoteHistory({ quotes: b.reader }, t);
    expect(b.reads()).toBe(1);
    expect(a.reads()).toBe(1);
  });

  it('keeps at most its limit of tickers per store, dropping the one kept longest', async () => {
    expect(QUOTE_HEADS_MEMO_TICKERS).toBe(1024);
    const prev = setQuoteHeadsMemoLimit(3);
    try {
      const c = countingStore(quotes);
      const [t1, t2, t3, t4] = tickers as [string, string, string, string];
      for (const t of [t1, t2, t3]) await readQuoteHeads(c.reader, t);
      expect(quoteHeadsMemoSize(c.store())).toBe(3);
      await readQuoteHeads(c.reader, t4); // t1 goes
      expect(quoteHeadsMemoSize(c.store())).toBe(3);
      expect(c.reads()).toBe(4);
      for (const t of [t2, t3, t4]) await readQuoteHeads(c.reader, t);
      expect(c.reads()).toBe(4);
      await readQuoteHeads(c.reader, t1);
      expect(c.reads()).toBe(5);
      // Over any number of requests the memo holds at most the limit.
      for (let i = 0; i < 200; i++) await readQuoteHeads(c.reader, tickers[i % tickers.length]!);
      expect(quoteHeadsMemoSize(c.store())).toBe(3);
    } finally {
      setQuoteHeadsMemoLimit(prev);
    }
  });

  it('shares a frozen record: an answer cannot change what later answers read', async () => {
    const t = both[0]!;
    const found = (await readQuoteHeads(quotes, t))!;
    const heads = found.heads!;
    expect((await readQuoteHeads(quotes, t))!.heads).toBe(heads);
    expect(Object.isFrozen(heads)).toBe(true);
    for (const c of heads.chains) {
      expect(Object.isFrozen(c)).toBe(true);
      expect(Object.isFrozen(c.head)).toBe(true);
      expect(Object.isFrozen(c.head.flags)).toBe(true);
      expect(c.tail?.every((b) => Object.isFrozen(b))).toBe(true);
    }
    expect(() => {
      (heads.chains[0]!.head as { close: number }).close = 1;
    }).toThrow(TypeError);
  });

  /** Each request's answer without the parts that change per request (REST usage_meta, the MCP result's _meta). */
  async function routeAnswers(t: string, id: number): Promise<string[]> {
    const out: string[] = [];
    for (const q of ['', '?limit=5', '?limit=40', '?adjustment=raw&limit=3']) {
      const res = await svc.app.fetch(new Request(`http://proofline.test/api/company/${t}/quote/history${q}`));
      const text = await res.text();
      expect(res.status, `${t}${q}`).toBe(200);
      const at = text.lastIndexOf(',"usage_meta":');
      out.push(`${res.status} ${res.headers.get('etag')} ${res.headers.get('link')} ${at < 0 ? text : text.slice(0, at)}`);
    }
    for (const args of [{ ticker: t }, { ticker: t, limit: 5 }]) {
      const res = await svc.app.fetch(
        new Request('http://proofline.test/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sec_quote_history', arguments: args } }),
        }),
      );
      const body = JSON.parse(await res.text()) as {
        result: { isError?: boolean; content: Array<{ text: string }>; structuredContent: { quotes: unknown[] } };
      };
      expect(body.result.isError, t).toBeUndefined();
      expect(body.result.structuredContent.quotes.length).toBe(args.limit ?? 30);
      out.push(`${res.status} ${body.result.content[0]!.text} ${JSON.stringify(body.result.structuredContent)}`);
    }
    return out;
  }

  it('answers REST and MCP with the same bytes on the first read of a record and on later ones', async () => {
    const store = quotes.packed(QUOTE_HEADS_STORE)!;
    // Tickers no earlier test read through the served store (the others used stores of their own, or both[0]).
    const some = [...new Set([...tickers.slice(12, 18), ...both.slice(1, 3)])];
    const before = quoteHeadsMemoSize(store);
    const first = new Map<string, string[]>();
    // The route's first request of each ticker parses its record: the memo grows by one ticker each.
    for (const t of some) first.set(t, await routeAnswers(t, 1));
    expect(quoteHeadsMemoSize(store)).toBe(before + some.length);
    for (const round of [2, 3]) for (const t of some) expect(await routeAnswers(t, 1), `${t} round ${round}`).toEqual(first.get(t));
    // And the same bytes as the SQL path's answers through the functions the routes call.
    for (const t of some)
      expect(await answer(() => getQuoteHistory({ quotes: sqlOnly(quotes) }, t))).toBe(await answer(() => getQuoteHistory({ quotes }, t)));
  });
});
