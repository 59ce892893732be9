import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { HAS_SHARED } from '../helpers/shared.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { ingestQuotes, linkQuoteFixtures } from './quotes-fixture.ts';

describe.skipIf(!HAS_SHARED)('quotes pipeline on the real fixtures', () => {
  let dir: string;
  let reader: SnapshotReader;
  beforeAll(async () => {
    dir = await tempDir();
    const input = path.join(dir, 'input');
    await linkQuoteFixtures(input);
    const report = await ingestQuotes(testConfig(path.join(dir, 'data')), input);
    expect(report.children.filter((c) => c.status === 'failed').map((c) => c.error)).toEqual([]);
    reader = await SnapshotReader.open(path.join(dir, 'data'), 'quotes', { poolSize: 1 });
  }, 180_000);
  afterAll(async () => {
    await reader?.close();
    await removeDir(dir);
  });

  it('keeps raw and adjusted series apart', async () => {
    const rows = await reader.query(`SELECT ticker, adjustment, count(*)::INTEGER AS n FROM quote_bars GROUP BY ALL ORDER BY ALL`);
    expect(rows).toEqual([
      { ticker: 'AAPL', adjustment: 'raw', n: expect.any(Number) },
      { ticker: 'AAPL', adjustment: 'split_dividend', n: expect.any(Number) },
      { ticker: 'MSFT', adjustment: 'raw', n: expect.any(Number) },
      { ticker: 'NVDA', adjustment: 'split_dividend', n: 1254 },
    ]);
  });

  it('flags the NVDA 2024-06-10 bad print and keeps its values', async () => {
    const [bar] = await reader.query(
      `SELECT high::VARCHAR AS high, close::VARCHAR AS close, flags FROM quote_bars WHERE ticker = 'NVDA' AND quote_date = DATE '2024-06-10'`,
    );
    expect(bar).toEqual({ high: '195.850000', close: '121.730000', flags: ['high_above_range'] });
  });
});
