/**
 * The quotes fetch step, in process: with POLYGON_API_KEY and
 * QUOTES_FETCH_TICKERS set, a run downloads each ticker's daily bars from a
 * local server replaying the real Polygon aggregates mock, parses the file after
 * its fetch job, and the bars' sources name the URL without the key; a ticker
 * the source does not know fails its fetch job, and with it only its parse child.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { processPlan } from '../../jobs/processors.ts';
import { planPolygonFetch } from '../../jobs/quotes/quotes-fetch.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

describe.skipIf(!HAS_SHARED)('quotes fetch step (Polygon)', { timeout: 120_000 }, () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let dir: string;
  const body = readFileSync(fixture('sec/quotes/polygon-mocks/v2__aggs__ticker__AAPL__range__1__day__2005-04-01__2005-04-04.json'));
  beforeAll(async () => {
    dir = await tempDir('proofline-quotes-fetch-');
    server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url?.startsWith('/v2/aggs/ticker/AAPL/range/1/day/')) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else res.writeHead(404).end('{"status":"NOT_FOUND"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.close();
    await removeDir(dir);
  });

  it('plans nothing without an API key or tickers', async () => {
    const inputDir = path.join(dir, 'none');
    expect(await planPolygonFetch({ config: testConfig(dir, { QUOTES_FETCH_TICKERS: 'AAPL' }), inputDir })).toEqual([]);
    expect(await planPolygonFetch({ config: testConfig(dir, { POLYGON_API_KEY: 'k' }), inputDir })).toEqual([]);
    const plan = await processPlan(quotesPipeline, { config: testConfig(dir), runId: 'quotes-nofetch', inputDir, log: silentLogger });
    expect(plan!.fetches).toEqual([]);
  });

  it('fetches each ticker into the input directory before parsing it, and publishes', async () => {
    const dataDir = path.join(dir, 'data');
    const inputDir = path.join(dir, 'input');
    const config = testConfig(dataDir, {
      POLYGON_API_KEY: 'secret-key',
      POLYGON_BASE_URL: base,
      QUOTES_FETCH_TICKERS: 'AAPL ZZZZ',
      QUOTES_FETCH_DAYS: '5',
      POLYGON_RATE_PER_MIN: '600',
    });
    const report = await runPipelineInProcess(quotesPipeline, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
    const to = new Date().toISOString().slice(0, 10);
    const keys = report.children.map((c) => `${c.step}:${c.key}`).sort();
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(new RegExp(`^fetch:polygon-fetch-AAPL-\\d{4}-\\d{2}-\\d{2}-${to}$`));
    expect(keys[1]).toMatch(new RegExp(`^fetch:polygon-fetch-ZZZZ-\\d{4}-\\d{2}-\\d{2}-${to}$`));
    expect(keys[2]).toMatch(new RegExp(`^polygon:polygon/AAPL_\\d{4}-\\d{2}-\\d{2}_${to}_adjusted\\.json$`));
    expect(keys[3]).toMatch(/^polygon:polygon\/ZZZZ_/);
    const failed = report.children
      .filter((c) => c.status === 'failed')
      .map((c) => c.step)
      .sort();
    // ZZZZ: its fetch job failed at once (404 is terminal), so its parse child failed without running.
    expect(failed).toEqual(['fetch', 'polygon']);
    expect(report.children.find((c) => c.step === 'polygon' && c.status === 'failed')!.error).toMatch(
      /^fetch polygon-fetch-ZZZZ-.* failed/,
    );
    expect(seen.every((u) => u.includes('apiKey=secret-key'))).toBe(true);
    const reader = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
    try {
      const rows = await reader.query(`SELECT quote_date::VARCHAR AS d FROM quote_bars ORDER BY quote_date`);
      expect(rows.map((r) => r.d)).toEqual(['2005-04-01', '2005-04-04']);
      const [src] = await reader.query(`SELECT source_url, retrieved_at FROM sources`);
      expect(String(src!.source_url)).toMatch(
        new RegExp(`^${base}/v2/aggs/ticker/AAPL/range/1/day/\\d{4}-\\d{2}-\\d{2}/${to}\\?adjusted=true`),
      );
      expect(String(src!.source_url)).not.toContain('secret-key');
      expect(src!.retrieved_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    } finally {
      await reader.close();
    }
  });
});
