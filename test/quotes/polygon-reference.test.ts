/**
 * Polygon's splits and dividends reference files (../shared/fixtures/sec/quotes/polygon-mocks/v3__reference__*.json)
 * are read into quote_corporate_actions with origin leaves, not rejected as "not an aggregates response"; the
 * aggregates beside them still become bars.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolygonReference } from '../../ingest/quotes/formats.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { ingestQuotes, linkQuoteFixtures, QUOTE_FIXTURES } from './quotes-fixture.ts';

const SPLITS = 'polygon-mocks/v3__reference__splits.json';
const DIVIDENDS = 'polygon-mocks/v3__reference__dividends.json';

describe('parsePolygonReference', () => {
  it('tells splits, dividends and aggregates apart and rejects a result without its amounts', () => {
    expect(parsePolygonReference('{"results":[{"T":"AAPL","o":1,"h":1,"l":1,"c":1,"v":1,"t":0}]}', 'a.json')).toBeNull();
    expect(parsePolygonReference('not json', 'a.json')).toBeNull();
    const r = parsePolygonReference(
      JSON.stringify({
        results: [
          { ticker: 'AMZN', execution_date: '2022-06-06', split_from: 1, split_to: 20 },
          { ticker: 'X', execution_date: '2022-06-06' },
        ],
      }),
      's.json',
    )!;
    expect(r.kind).toBe('splits');
    expect(r.actions).toEqual([
      expect.objectContaining({ ticker: 'AMZN', action: 'split', ex_date: '2022-06-06', split_from: 1, split_to: 20 }),
    ]);
    expect(r.rejects).toEqual([expect.objectContaining({ line: 1 })]);
  });
});

describe.skipIf(!HAS_SHARED)('Polygon reference files in a quotes run', () => {
  let dir: string;
  let reader: SnapshotReader;
  beforeAll(async () => {
    dir = await tempDir('proofline-polygon-reference-');
    const input = path.join(dir, 'input');
    await linkQuoteFixtures(input, [...QUOTE_FIXTURES, SPLITS, DIVIDENDS]);
    const r = await ingestQuotes(testConfig(path.join(dir, 'data')), input);
    expect(r.failed_children).toBe(0);
    reader = await SnapshotReader.open(path.join(dir, 'data'), 'quotes', { poolSize: 1 });
  }, 120_000);
  afterAll(async () => {
    await reader?.close();
    await removeDir(dir);
  });

  it('reads every split and dividend of the real files, each with a verifiable origin leaf', async () => {
    const count = (f: string) => (JSON.parse(readFileSync(fixture(`sec/quotes/${f}`), 'utf8')).results as unknown[]).length;
    const rows = await reader.query(`SELECT action, count(*)::INTEGER AS n FROM quote_corporate_actions GROUP BY action ORDER BY action`);
    expect(rows).toEqual([
      { action: 'dividend', n: count(DIVIDENDS) },
      { action: 'split', n: count(SPLITS) },
    ]);
    const [amzn] = await reader.query(
      `SELECT ex_date::VARCHAR AS ex_date, split_from, split_to, origin_leaf_hash FROM quote_corporate_actions WHERE ticker = 'AMZN'`,
    );
    expect(amzn).toMatchObject({ ex_date: '2022-06-06', split_from: 1, split_to: 20 });
    const leaf = await reader.query(`SELECT * FROM origin_leaves WHERE leaf_hash = $h`, { h: String(amzn!.origin_leaf_hash) });
    const { table_name: _t, first_run_id: _r, ...body } = leaf[0]!;
    expect(verifyLeaf({ ...body, alg: 'sha256', canon: 'rfc8785' })).toBe(true);
    expect(await reader.query(`SELECT file FROM rejects WHERE file LIKE '%reference%'`)).toEqual([]);
    const [{ n }] = await reader.query(
      `SELECT count(*)::INTEGER AS n FROM quote_bars WHERE ticker = 'AAPL' AND quote_date BETWEEN '2005-04-01' AND '2005-04-04'`,
    );
    expect(Number(n)).toBeGreaterThan(0);
  });
});
