/**
 * Splits and dividends (issue 18, item 4) against the replay server: with market-wide quotes, each weekday's splits
 * (`/v3/reference/splits?execution_date=`) and cash dividends (`/v3/reference/dividends?ex_dividend_date=`) are
 * fetched through the same Polygon client and limiter as the grouped bars, read into quote_corporate_actions (a
 * day without any is an empty list, stored so it is not asked again), and the splits are applied: every raw bar
 * before a split gets its split-adjusted values, checked against the stored adjusted bar of that day
 * (quote_split_adjustments: derived / agrees / stale).
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { closePolygonLimiter } from '../../jobs/quotes/quotes-fetch.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { hashCanonical } from '../../lib/hash.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { buildTestService, getJson } from '../helpers/app.ts';
import { connectClient } from '../mcp/mcp-helpers.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { FIXTURES, HAS_SHARED } from '../helpers/shared.ts';

const GROUPED = (d: string) => `/v2/aggs/grouped/locale/us/market/stocks/${d}`;

/** A grouped-daily body (Polygon's shape) with one bar per [ticker, close] on `date` (16:00 New York). */
function groupedBody(date: string, adjusted: boolean, bars: Array<[string, number]>): string {
  const t = Date.parse(`${date}T20:00:00Z`);
  return JSON.stringify({
    queryCount: bars.length,
    resultsCount: bars.length,
    adjusted,
    results: bars.map(([T, c]) => ({ T, o: c, h: c, l: c, c, v: 1000, vw: c, n: 10, t })),
    status: 'OK',
    request_id: 'replay',
  });
}

describe.skipIf(!HAS_SHARED)('splits and dividends from Polygon reference endpoints (replay server)', { timeout: 120_000 }, () => {
  let replay: ReplayServer;
  let dataDir: string;
  beforeAll(async () => {
    replay = await startReplayServer(FIXTURES);
    dataDir = await tempDir('proofline-actions-');
  });
  afterEach(async () => {
    await closePolygonLimiter();
  });
  afterAll(async () => {
    await replay.close();
    await removeDir(dataDir);
  });

  it('fetches each day once, reads the DXCM 1:4 split of 2022-06-10 and applies it to the raw bars before it', async () => {
    // DXCM traded at ~400 before its 2022-06-10 split (1 → 4 shares) and ~100 after. The adjusted file of 06-07
    // lacks DXCM (only raw was read that day), that of 06-08 still has the pre-split price (as fetched before the
    // split), that of 06-09 is adjusted.
    const days: Record<string, { raw: Array<[string, number]>; adjusted: Array<[string, number]> }> = {
      '2022-06-07': { raw: [['DXCM', 388]], adjusted: [['ZZZT', 10]] },
      '2022-06-08': { raw: [['DXCM', 392]], adjusted: [['DXCM', 392]] },
      '2022-06-09': { raw: [['DXCM', 400]], adjusted: [['DXCM', 100]] },
      '2022-06-10': { raw: [['DXCM', 101]], adjusted: [['DXCM', 101]] },
    };
    for (const [d, b] of Object.entries(days)) {
      replay.override(`${GROUPED(d)}?adjusted=false`, groupedBody(d, false, b.raw));
      replay.override(`${GROUPED(d)}?adjusted=true`, groupedBody(d, true, b.adjusted));
    }
    const config = testConfig(dataDir, {
      POLYGON_API_KEY: 'test-key',
      POLYGON_BASE_URL: replay.baseUrl,
      POLYGON_RATE_PER_MIN: '600',
      QUOTES_FETCH_GROUPED: '1',
      QUOTES_GROUPED_SERIES: 'adjusted,raw',
      QUOTES_FETCH_UNTIL: '2022-06-10',
      QUOTES_FETCH_DAYS: '4',
    });
    const inputDir = path.join(dataDir, 'input');
    const run = () => runPipelineInProcess(quotesPipeline, { config, log: silentLogger, inputDir, backoffMs: 1 });

    let from = replay.hits.length;
    const r1 = await run();
    expect(r1.children.filter((c) => c.status === 'failed').map((c) => `${c.key}: ${c.error}`)).toEqual([]);
    const asked = replay.hits.slice(from);
    // Four requests per weekday: grouped adjusted and raw, splits, dividends; all answered.
    expect(asked.map((h) => h.status)).toEqual(Array(16).fill(200));
    expect(asked.filter((h) => h.path === '/v3/reference/splits')).toHaveLength(4);
    expect(asked.filter((h) => h.path === '/v3/reference/dividends')).toHaveLength(4);

    const reader = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
    try {
      const actions = await reader.query(
        `SELECT ticker, action, ex_date::VARCHAR AS ex_date, split_from, split_to, file FROM quote_corporate_actions ORDER BY ticker`,
      );
      // The recorded listing holds no dividend with an ex-date in the window: those days are empty lists.
      expect(actions).toEqual([
        {
          ticker: 'DXCM',
          action: 'split',
          ex_date: '2022-06-10',
          split_from: 1,
          split_to: 4,
          file: 'polygon/reference/2022-06-10_splits.json',
        },
      ]);
      const adj = await reader.query(
        `SELECT quote_date::VARCHAR AS d, split_factor, splits_after, raw_close::DOUBLE AS raw_close, adjusted_close::DOUBLE AS adjusted_close,
                adjusted_volume::INTEGER AS adjusted_volume, stored_adjusted_close::DOUBLE AS stored, status, len(split_leaf_hashes)::INTEGER AS leaves
         FROM quote_split_adjustments WHERE ticker = 'DXCM' ORDER BY quote_date`,
      );
      expect(adj).toEqual([
        {
          d: '2022-06-07',
          split_factor: 4,
          splits_after: 1,
          raw_close: 388,
          adjusted_close: 97,
          adjusted_volume: 4000,
          stored: null,
          status: 'derived',
          leaves: 1,
        },
        {
          d: '2022-06-08',
          split_factor: 4,
          splits_after: 1,
          raw_close: 392,
          adjusted_close: 98,
          adjusted_volume: 4000,
          stored: 392,
          status: 'stale',
          leaves: 1,
        },
        {
          d: '2022-06-09',
          split_factor: 4,
          splits_after: 1,
          raw_close: 400,
          adjusted_close: 100,
          adjusted_volume: 4000,
          stored: 100,
          status: 'agrees',
          leaves: 1,
        },
      ]);
      // The split's origin leaf is the one its quote_corporate_actions row names.
      const [link] = await reader.query(
        `SELECT a.split_leaf_hashes[1] = c.origin_leaf_hash AS same FROM quote_split_adjustments a, quote_corporate_actions c WHERE a.ticker = 'DXCM' LIMIT 1`,
      );
      expect(link!.same).toBe(true);
    } finally {
      await reader.close();
    }

    // Every day is on disk: the next run asks Polygon nothing.
    from = replay.hits.length;
    const r2 = await run();
    expect(r2.failed_children).toBe(0);
    expect(replay.hits.slice(from)).toEqual([]);

    // Served (HTTP and MCP): the adjusted series is continuous across the split; the stale 06-08 bar (392, fetched
    // before the split) is served as 98, re-derived from the raw bar, and says so.
    const svc = await buildTestService(config, ['quotes']);
    try {
      const { status, body } = await getJson(svc.app, '/api/company/DXCM/quote/history?adjustment=split_dividend&limit=10');
      expect(status).toBe(200);
      expect(body.quotes.map((q: any) => [q.quote_date, q.quote.close, q.split_adjustment !== null])).toEqual([
        ['2022-06-10', 101, false],
        ['2022-06-09', 100, false],
        ['2022-06-08', 98, true],
      ]);
      expect(body.split_adjusted_days).toBe(1);
      const closes = body.quotes.map((q: any) => q.quote.close);
      for (let i = 1; i < closes.length; i++) expect(Math.abs(closes[i - 1] / closes[i] - 1)).toBeLessThan(0.05);
      expect(body.quotes.every((q: any) => q.origin_verified === true)).toBe(true);

      const [, after, stale] = body.quotes;
      const sa = stale.split_adjustment;
      expect(stale.quote).toEqual({ open: 98, high: 98, low: 98, close: 98, volume: 4000, vwap: 98, trade_count: 10 });
      expect(sa.stored.quote.close).toBe(392);
      expect(sa.raw.quote.close).toBe(392);
      expect(sa.split_factor).toBe(4);
      // Provenance: the served leaf names the split reference file and its parent is the raw bar's chained leaf
      // (which names the raw grouped file); the stored adjusted leaf names the adjusted grouped file; the chain
      // continues from the stored leaf.
      const srcs = await (async () => {
        const r = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
        try {
          return await r.query(`SELECT DISTINCT dataset, content_sha256, source_url FROM sources ORDER BY source_url`);
        } finally {
          await r.close();
        }
      })();
      const fileOf = (sha: string) => srcs.filter((x) => x.content_sha256 === sha).map((x) => String(x.source_url));
      expect(stale.origin.kind).toBe('quote_split_adjusted');
      expect(verifyLeaf(stale.origin)).toBe(true);
      expect(fileOf(stale.origin.content_sha256).join()).toMatch(/reference\/splits\?execution_date=2022-06-10/);
      expect(stale.origin.record_sha256).toBe(hashCanonical(sa.record));
      expect(sa.record).toMatchObject({ ticker: 'DXCM', quote_date: '2022-06-08', close: 98, split_factor: 4 });
      expect(sa.record.split_leaf_hashes).toEqual([sa.splits[0].origin.leaf_hash]);
      expect(sa.splits).toMatchObject([
        { ex_date: '2022-06-10', split_from: 1, split_to: 4, file: 'polygon/reference/2022-06-10_splits.json' },
      ]);
      expect(stale.origin.parent).toBe(sa.raw.origin.leaf_hash);
      expect(sa.raw.origin.kind).toBe('quote_day');
      expect(fileOf(sa.raw.origin.content_sha256).join()).toMatch(/grouped\/locale\/us\/market\/stocks\/2022-06-08\?adjusted=false/);
      expect(fileOf(sa.stored.origin.content_sha256).join()).toMatch(/grouped\/locale\/us\/market\/stocks\/2022-06-08\?adjusted=true/);
      expect(after.origin.parent).toBe(sa.stored.origin.leaf_hash);
      for (const q of body.quotes.filter((x: any) => !x.split_adjustment)) expect(q.origin.kind).toBe('quote_day');
      // /api/verify finds the served leaf (its hash is stored at publish) and walks on through the raw bar's chain
      // to the raw file's source leaf.
      const v = await getJson(svc.app, `/api/verify/${stale.origin.leaf_hash}`);
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ found: true, domain: 'quotes', table_name: 'quote_split_adjustments', leaf: stale.origin });
      expect(v.body.chain.valid).toBe(true);
      expect(v.body.chain.leaves.map((l: any) => l.kind)).toEqual(['quote_split_adjusted', 'quote_day', 'quote_day', 'source']);
      expect(v.body.chain.leaves[1]).toEqual(sa.raw.origin);

      // The raw series is served as stored (no split_adjustment).
      const raw = await getJson(svc.app, '/api/company/DXCM/quote/history?adjustment=raw&limit=10');
      expect(raw.body.quotes.map((q: any) => [q.quote.close, q.split_adjustment])).toEqual([
        [101, null],
        [400, null],
        [392, null],
        [388, null],
      ]);
      expect(raw.body.split_adjusted_days).toBe(0);

      // The MCP tool calls the same query: same served values and leaves.
      const client = await connectClient(svc.app);
      try {
        const res = (await client.callTool({ name: 'sec_quote_history', arguments: { ticker: 'DXCM', adjustment: 'split_dividend' } })) as {
          structuredContent?: Record<string, any>;
        };
        expect(res.structuredContent!.quotes.map((q: any) => q.quote.close)).toEqual([101, 100, 98]);
        expect(res.structuredContent!.quotes[2].origin).toEqual(stale.origin);
      } finally {
        await client.close();
      }
    } finally {
      await svc.close();
    }
  });
});
