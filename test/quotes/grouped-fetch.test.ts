/**
 * Market-wide quotes (QUOTES_FETCH_GROUPED) against the replay server: one Polygon grouped-daily request per
 * weekday and series (the real recorded response), parsed into bars of every ticker in it; a day the source could
 * not give is reported and fetched by the next run (missing days filled), and a day already on disk is never
 * asked for again.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { closePolygonLimiter } from '../../jobs/quotes/quotes-fetch.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { FIXTURES, fixture, HAS_SHARED } from '../helpers/shared.ts';

const GROUPED = (d: string) => `/v2/aggs/grouped/locale/us/market/stocks/${d}`;
const isGrouped = (h: { path: string }) => h.path.startsWith('/v2/aggs/grouped/');

describe.skipIf(!HAS_SHARED)('market-wide quotes from Polygon grouped daily (replay server)', { timeout: 120_000 }, () => {
  let replay: ReplayServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    replay = await startReplayServer(FIXTURES);
  });
  afterEach(async () => {
    await closePolygonLimiter();
  });
  afterAll(async () => {
    await replay.close();
    for (const d of dirs) await removeDir(d);
  });

  it('fetches one request per weekday, fills the missing day on the next run, and never asks twice for a day on disk', async () => {
    const dataDir = await tempDir('proofline-grouped-');
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const config = testConfig(dataDir, {
      POLYGON_API_KEY: 'test-key',
      POLYGON_BASE_URL: replay.baseUrl,
      POLYGON_RATE_PER_MIN: '600',
      QUOTES_FETCH_GROUPED: '1',
      QUOTES_GROUPED_SERIES: 'adjusted',
      QUOTES_FETCH_UNTIL: '2005-04-05',
      QUOTES_FETCH_DAYS: '3',
    });
    const run = () => runPipelineInProcess(quotesPipeline, { config, log: silentLogger, inputDir, backoffMs: 1 });

    // Run 1: 2005-04-03 is a Sunday (not asked); 04-04 is recorded; 04-05 is not available (404): reported.
    let from = replay.hits.length;
    const r1 = await run();
    // (Each weekday's splits and dividends are fetched too: test/quotes/corporate-actions-fetch.test.ts.)
    expect(
      replay.hits
        .slice(from)
        .filter(isGrouped)
        .map((h) => `${h.status} ${h.path}`)
        .sort(),
    ).toEqual([`200 ${GROUPED('2005-04-04')}`, `404 ${GROUPED('2005-04-05')}`]);
    expect(r1.children.filter((c) => c.status === 'failed').map((c) => c.key)).toEqual(
      expect.arrayContaining(['polygon-grouped-2005-04-05-adjusted']),
    );
    let reader = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
    try {
      const bars = await reader.query(`SELECT ticker, quote_date::VARCHAR AS d FROM quote_bars ORDER BY ticker`);
      expect(bars).toEqual([{ ticker: 'GIK', d: '2020-10-14' }]);
    } finally {
      await reader.close();
    }

    // Run 2: the source now has 04-05: only that day is asked for (04-04 is on disk).
    const body = JSON.parse(
      readFileSync(
        fixture('sec/quotes/polygon-mocks/v2__aggs__grouped__locale__us__market__stocks__2005-04-04_adjusted-true.json'),
        'utf8',
      ),
    );
    body.results[0].t += 86_400_000;
    replay.override(GROUPED('2005-04-05'), JSON.stringify(body));
    from = replay.hits.length;
    const r2 = await run();
    replay.restore(GROUPED('2005-04-05'));
    expect(r2.failed_children).toBe(0);
    expect(replay.hits.slice(from).map((h) => `${h.status} ${h.path}`)).toEqual([`200 ${GROUPED('2005-04-05')}`]);
    expect(replay.hits.some((h) => h.path.startsWith('/v3/reference/') && h.status !== 200)).toBe(false);
    reader = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
    try {
      const n = await reader.query(`SELECT count(*)::INTEGER AS n FROM quote_bars`);
      expect(n[0]!.n).toBe(2);
    } finally {
      await reader.close();
    }
  });
});
