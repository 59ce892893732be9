import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { sha256Hex } from '../../lib/hash.ts';
import { createSourceLeaf } from '../../lib/origin.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest, tableFilePaths } from '../../lib/warehouse/snapshot.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { chainBars } from '../../ingest/quotes/chain.ts';
import { findQuoteLeaf, verifyQuoteChain } from '../../service/quotes/quotes.queries.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { ingestQuotes, linkQuoteFixtures, writeInput } from './quotes-fixture.ts';

/** The first three data rows of the real Alpaca AAPL daily file: a 3-day chain. */
function threeDayCsv(): string {
  return readFileSync(fixture('sec/quotes/alpaca-daily/AAPL_1Day.csv'), 'utf8').split('\n').slice(0, 4).join('\n') + '\n';
}

describe.skipIf(!HAS_SHARED)('quote endpoints and chain verification on the real fixtures', () => {
  let dir: string;
  let input: string;
  let svc: TestService;
  const dataDir = () => path.join(dir, 'data');
  beforeAll(async () => {
    dir = await tempDir();
    input = path.join(dir, 'input');
    await linkQuoteFixtures(input, ['alpaca-daily/NVDA_1Day.csv', 'alpaca-sdk/MSFT.csv']);
    await writeInput(input, 'three/AAPL_3day.csv', threeDayCsv());
    await ingestQuotes(testConfig(dataDir()), input);
    svc = await buildTestService(testConfig(dataDir()), ['quotes']);
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(dir);
  });

  it('pins the head of a 3-day chain, equal to the pure fold', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/AAPL/quote/history?limit=3');
    expect(status).toBe(200);
    expect(body.quotes.map((q: any) => q.quote_date)).toEqual(['2021-02-22', '2021-02-19', '2021-02-18']);
    const csv = threeDayCsv();
    const src = { source: 'alpaca/bars-1day-adjusted', source_url: null, retrieved_at: null, content_sha256: sha256Hex(csv) };
    const pure = chainBars(
      body.quotes.map((q: any) => ({ ticker: 'AAPL', quote_date: q.quote_date, adjustment: 'split_dividend', ...q.quote })),
      src,
    );
    expect(body.quotes[0].origin.leaf_hash).toBe(pure[2].leaf.leaf_hash);
    expect(body.quotes[2].origin.parent).toBe(createSourceLeaf({ ...src, byte_size: 0 }).leaf_hash);
    expect(body.quotes[0].origin.parent).toBe(body.quotes[1].origin.leaf_hash);
    await expect(
      JSON.stringify(
        body.quotes.map((q: any) => ({ quote_date: q.quote_date, quote: q.quote, origin: q.origin })),
        null,
        2,
      ) + '\n',
    ).toMatchFileSnapshot('../golden/quotes/aapl-3day-chain.json');
    expect(body.quotes[0].origin.leaf_hash).toMatchInlineSnapshot(`"1b053ef301612795f9242b998170990d7ab00b6526ebcb241d43c07c317fc513"`);
  });

  it('serves the latest bar with its series, flags and a verified origin', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/NVDA/quote');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      schema: 'proofline/stock-quote/v1',
      ticker: 'NVDA',
      quote_date: '2026-02-13',
      adjustment: 'split_dividend',
      quote: { close: 182.81, trade_count: 2577092 },
      origin_verified: true,
    });
    expect(body.market_context.market_cap).toBeNull();
    expect(body.market_context.note).toMatch(/registry/);
  });

  it('clamps limit above 365 and says so; rejects bad parameters naming them', async () => {
    const r = await getJson(svc.app, '/api/company/NVDA/quote/history?limit=1000');
    expect(r.body.limit_clamped).toEqual({ requested: 1000, max: 365 });
    expect(r.body.quotes).toHaveLength(365);
    const bad = await getJson(svc.app, '/api/company/NVDA/quote/history?from=June');
    expect(bad.status).toBe(400);
    expect(bad.body.parameter).toBe('from');
    const adj = await getJson(svc.app, '/api/company/NVDA/quote?adjustment=raw');
    expect(adj.status).toBe(404);
    expect(adj.body).toMatchObject({ ticker: 'NVDA', hint: expect.stringContaining('split_dividend') });
    expect((await getJson(svc.app, '/api/company/ZZZZ/quote')).status).toBe(404);
  });

  it('keeps the NVDA bad print with its flag in the history', async () => {
    const { body } = await getJson(svc.app, '/api/company/NVDA/quote/history?limit=365&from=2024-06-10');
    const day = body.quotes.find((q: any) => q.quote_date === '2024-06-10');
    expect(day).toMatchObject({ quote: { high: 195.85, close: 121.73 }, flags: ['high_above_range'], origin_verified: true });
  });

  it('finds any quote leaf by hash with its chain down to the source file', async () => {
    const { body } = await getJson(svc.app, '/api/company/AAPL/quote');
    const found = await findQuoteLeaf(svc.deps.readers.quotes, body.origin.leaf_hash);
    expect(found).toMatchObject({ table: 'quote_bars', valid: true, truncated: false });
    expect(found!.chain.map((l) => l.kind)).toEqual(['quote_day', 'quote_day', 'quote_day', 'source']);
    const src = await findQuoteLeaf(svc.deps.readers.quotes, found!.chain[3].leaf_hash);
    expect(src).toMatchObject({ table: 'origin_leaves', valid: true });
    expect(await findQuoteLeaf(svc.deps.readers.quotes, 'f'.repeat(64))).toBeNull();
  });

  it('detects a quote row tampered in the warehouse (one cent) by re-verifying the chain', async () => {
    expect(await verifyQuoteChain(svc.deps.readers.quotes, 'MSFT')).toMatchObject({ valid: true });
    await svc.close();
    // quote_bars is parquet-only: rewrite its file(s) with one close changed by one cent.
    const manifest = (await readCurrentManifest(dataDir(), 'quotes'))!;
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    for (const f of tableFilePaths(snapshotDir(dataDir(), 'quotes', manifest.snapshot_id), 'quote_bars', manifest.tables.quote_bars)) {
      await conn.run(`COPY (SELECT * REPLACE (CASE WHEN ticker = 'MSFT' AND quote_date = DATE '2025-03-03' THEN CAST(close + 0.01 AS DECIMAL(18,6)) ELSE close END AS close)
        FROM read_parquet('${f}')) TO '${f}.tampered' (FORMAT parquet)`);
      await rename(`${f}.tampered`, f);
    }
    conn.closeSync();
    db.closeSync();
    svc = await buildTestService(testConfig(dataDir()), ['quotes']);
    const v = await verifyQuoteChain(svc.deps.readers.quotes, 'MSFT');
    expect(v.valid).toBe(false);
    expect(v.chains[0].first_mismatch?.quote_date).toBe('2025-03-03');
    const { body } = await getJson(svc.app, '/api/company/MSFT/quote/history?limit=365');
    expect(body.quotes.filter((q: any) => !q.origin_verified).map((q: any) => q.quote_date)).toEqual(['2025-03-03']);
  });
});

describe.skipIf(!HAS_SHARED)('quote forks', () => {
  it('keeps a corrected bar as a superseded sibling and re-chains later runs, recording the old leaves', async () => {
    const dir = await tempDir();
    try {
      const input = path.join(dir, 'input');
      const dataDir = path.join(dir, 'data');
      const csv = threeDayCsv();
      const lines = csv.trimEnd().split('\n');
      await writeInput(input, 'a/AAPL.csv', csv);
      // A later file corrects 2021-02-19's close by one cent and repeats 2021-02-22 unchanged (a duplicate).
      const fixedLine = lines[2].replace(
        /,(\d+\.\d+),(\d+\.\d+),(\d+\.\d+),(\d+\.\d+),/,
        (_m, o, h, l, c) => `,${o},${h},${l},${(Number(c) + 0.01).toFixed(2)},`,
      );
      await writeInput(input, 'b/AAPL-fix.csv', [lines[0], fixedLine, lines[3]].join('\n') + '\n');
      const report = await ingestQuotes(testConfig(dataDir), input);
      expect(report.failed_children).toBe(0);
      let reader = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
      const hist = await reader.query(
        `SELECT quote_date::VARCHAR AS d, reason, superseded_by IS NOT NULL AS has_successor FROM quote_leaf_history`,
      );
      expect(hist).toEqual([{ d: '2021-02-19', reason: 'superseded_in_input', has_successor: true }]);
      const rejects = await reader.query(`SELECT file, reason FROM rejects WHERE reason LIKE 'duplicate%'`);
      expect(rejects).toEqual([{ file: 'b/AAPL-fix.csv', reason: expect.stringContaining('2021-02-22') }]);
      const [old] = await reader.query(`SELECT leaf_hash, parent FROM quote_leaf_history`);
      const found = await findQuoteLeaf(reader, String(old.leaf_hash));
      expect(found).toMatchObject({ table: 'quote_leaf_history', valid: true, superseded: { reason: 'superseded_in_input' } });
      const [cur] = await reader.query(`SELECT leaf_hash FROM quote_bars WHERE quote_date = DATE '2021-02-19'`);
      const curFound = await findQuoteLeaf(reader, String(cur.leaf_hash));
      expect(curFound!.leaf.parent).toBe(old.parent);
      const before = await reader.query(`SELECT leaf_hash FROM quote_bars ORDER BY quote_date`);
      await reader.close();

      // Next run without the correction file: the chain goes back to the original values; the corrected leaves move to history.
      await removeDir(path.join(input, 'quotes', 'b'));
      await ingestQuotes(testConfig(dataDir), input);
      reader = await SnapshotReader.open(dataDir, 'quotes', { poolSize: 1 });
      const h2 = await reader.query(
        `SELECT quote_date::VARCHAR AS d, reason, fork_date::VARCHAR AS fork FROM quote_leaf_history ORDER BY quote_date, reason`,
      );
      expect(h2).toEqual([
        { d: '2021-02-19', reason: 'corrected', fork: '2021-02-19' },
        { d: '2021-02-19', reason: 'superseded_in_input', fork: '2021-02-19' },
        { d: '2021-02-22', reason: 'rechained', fork: '2021-02-19' },
      ]);
      const after = await reader.query(`SELECT leaf_hash FROM quote_bars ORDER BY quote_date`);
      expect(after[0]).toEqual(before[0]);
      expect(after[1]).not.toEqual(before[1]);
      expect((await verifyQuoteChain(reader, 'AAPL')).valid).toBe(true);
      await reader.close();
    } finally {
      await removeDir(dir);
    }
  }, 180_000);
});
