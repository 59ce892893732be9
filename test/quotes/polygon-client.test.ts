import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sha256Hex } from '../../lib/hash.ts';
import { PolygonClient } from '../../jobs/quotes/polygon-client.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { ingestQuotes } from './quotes-fixture.ts';

describe.skipIf(!HAS_SHARED)('PolygonClient against a local server replaying the real aggregates mock', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let failNext = 1;
  const body = readFileSync(fixture('sec/quotes/polygon-mocks/v2__aggs__ticker__AAPL__range__1__day__2005-04-01__2005-04-04.json'));
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      if (failNext > 0) {
        failNext--;
        res.writeHead(503).end('busy');
        return;
      }
      if (req.url?.startsWith('/v2/aggs/ticker/AAPL/range/1/day/2005-04-01/2005-04-04')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      } else res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('fetches daily aggregates with the key, retries a 503, records the URL without the key, and the pipeline chains the saved file', async () => {
    const dir = await tempDir();
    try {
      const client = new PolygonClient({
        baseUrl: base,
        apiKey: 'secret-key',
        userAgent: 'Proofline test',
        limiter: { acquire: async () => undefined },
        backoffMs: 1,
      });
      const file = await client.saveDailyAggs(path.join(dir, 'input', 'quotes'), 'AAPL', '2005-04-01', '2005-04-04', true);
      expect(seen).toHaveLength(2);
      expect(seen[1]).toContain('apiKey=secret-key');
      const meta = JSON.parse(await readFile(`${file}.meta.json`, 'utf8'));
      expect(meta.source_url).toBe(`${base}/v2/aggs/ticker/AAPL/range/1/day/2005-04-01/2005-04-04?adjusted=true&sort=asc&limit=50000`);
      expect(meta.sha256).toBe(sha256Hex(body));
      await ingestQuotes(testConfig(path.join(dir, 'data')), path.join(dir, 'input'));
      const reader = await SnapshotReader.open(path.join(dir, 'data'), 'quotes', { poolSize: 1 });
      const rows = await reader.query(`SELECT quote_date::VARCHAR AS d, adjustment, dataset FROM quote_bars ORDER BY quote_date`);
      expect(rows).toEqual([
        { d: '2005-04-01', adjustment: 'split_dividend', dataset: 'polygon/aggs-1day-adjusted' },
        { d: '2005-04-04', adjustment: 'split_dividend', dataset: 'polygon/aggs-1day-adjusted' },
      ]);
      const [src] = await reader.query(`SELECT source_url, retrieved_at FROM sources`);
      expect(src).toEqual({ source_url: meta.source_url, retrieved_at: meta.retrieved_at });
      await reader.close();
    } finally {
      await removeDir(dir);
    }
  });

  it('rejects an inverted date range before any request', async () => {
    const client = new PolygonClient({ baseUrl: base, apiKey: undefined, userAgent: 'Proofline test' });
    await expect(client.dailyAggs('AAPL', '2005-04-04', '2005-04-01')).rejects.toThrow(/invalid date range/);
  });
});
