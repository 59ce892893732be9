/**
 * The chain heads store's SELECT (jobs/quotes/derive-heads.sql) builds each record's JSON from texts: every bar's
 * to_json once, the 31 newest by arg_max (newest first), a chain's and a ticker's members spliced in order (issue 22
 * item 3: the ordered list aggregates of nested structs and the one to_json of the whole record were most of publish at
 * full scale). Records byte-equal to the previous SELECT (test/quotes/fixtures/derive-heads-nested.sql) on the same
 * tables: raw and adjusted chains of one ticker (newest last date first, raw first on a tie), chains longer and shorter
 * than 31 days, a one-day chain, a chain over two files (part null), a whole span from the tails' chain parts, a head
 * without a source, a source URL needing escapes, several sources of one file, flags, null vwap and trade count, stale
 * split days. The plan has no ordered aggregate.
 */
import { readFile } from 'node:fs/promises';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, queryRows } from '../../lib/warehouse/duckdb.ts';

const read = (rel: string) => readFile(new URL(rel, import.meta.url), 'utf8');

describe('chain heads records as spliced JSON texts', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  beforeAll(async () => {
    db = await openDatabase(':memory:', { threads: 2 });
    conn = await db.connect();
    await conn.run(await read('../../lib/warehouse/common-tables.sql'));
    await conn.run(await read('../../jobs/quotes/tables.sql'));
    // Chains: [ticker, adjustment, days, last date, file, dataset, content, flags every 7th day, nulls every 5th day].
    const chains: Array<[string, string, number, string, string, string]> = [
      ['AAA', 'raw', 45, '2024-03-29', 'f0', 'c0'],
      ['AAA', 'split_dividend', 40, '2024-04-05', 'f0', 'c1'],
      ['AAB', 'raw', 31, '2024-03-29', 'f0', 'c0'],
      ['AAB', 'split_dividend', 33, '2024-03-29', 'f0', 'c1'],
      ['ABC', 'raw', 1, '2024-02-01', 'f1', 'c2'],
      ['ABD', 'raw', 30, '2024-02-01', 'f1', 'c2'],
      ['ABE', 'raw', 2, '2024-02-01', 'f1', 'nosource'],
      ['ACC', 'raw', 50, '2024-05-01', 'f1', 'c2'],
    ];
    await conn.run(`CREATE TEMP TABLE heads_bars AS SELECT *, ''::VARCHAR AS part_file FROM quote_bars LIMIT 0`);
    for (const [ticker, adjustment, days, last, file, content] of chains) {
      await conn.run(`INSERT INTO heads_bars
        SELECT '${ticker}', '${adjustment}', DATE '${last}' - (${days} - 1 - d)::INTEGER, 10.5 + d * 0.25, 11 + d * 0.25, 10 + d * 0.125,
          10.75 + d * 0.25, 1000 + d, CASE WHEN d % 5 = 1 THEN NULL ELSE 10.6 + d * 0.25 END, CASE WHEN d % 5 = 2 THEN NULL ELSE 10 + d END,
          CASE WHEN d % 7 = 3 THEN ['high_above_range', 'vwap_outside_range'] ELSE [] END, 'ds/${content === 'nosource' ? 'x' : 'y'}', '${content}', d,
          sha256('${ticker}${adjustment}' || d), 0, '${ticker}' || '.' || ${ticker === 'ACC' ? `CASE WHEN d < 20 THEN 'f0' ELSE 'f1' END` : `'${file}'`}
        FROM range(${days}) r(d)`);
    }
    await conn.run(
      `CREATE TEMP TABLE quote_heads_parts AS SELECT DISTINCT part_file AS file, dense_rank() OVER (ORDER BY part_file)::INTEGER - 1 AS part FROM heads_bars`,
    );
    // The whole span of AAA raw (its tails only in heads_bars), as the chain parts give it.
    await conn.run(
      `CREATE TEMP TABLE quote_heads_spans AS SELECT 'AAA' AS ticker, 'raw' AS adjustment, DATE '2023-01-03' AS first_date, 312 AS days`,
    );
    await conn.run(
      `CREATE TEMP TABLE quote_heads_keys AS SELECT row_number() OVER (ORDER BY ticker)::INTEGER AS k, ticker FROM (SELECT DISTINCT ticker FROM heads_bars)`,
    );
    await conn.run(`INSERT INTO sources VALUES
      ('r', 'ds/y', 'a.csv', 'https://example.test/a?x="1"&y=é\\', 1, 'c0', '2024-04-01T00:00:00Z', 'now', 'l0', 1, 0),
      ('r', 'ds/y', 'a.csv', 'https://example.test/b', 1, 'c0', '2024-03-01T00:00:00Z', 'now', 'l0b', 1, 0),
      ('r', 'ds/y', 'b.csv', NULL, 1, 'c1', NULL, 'now', 'l1', 1, 0),
      ('r', 'ds/y', 'c.csv', 'file:c', 1, 'c2', '2024-01-01', 'now', 'l2', 1, 0)`);
    await conn.run(`INSERT INTO quote_split_adjustments
      SELECT 'AAB', DATE '2024-03-01' + d::INTEGER, 2, 1, 1, 1, 1, 1, 1, 1, NULL, CASE WHEN d < 3 THEN 'stale' ELSE 'agrees' END, 'r', NULL, [], NULL FROM range(5) r(d)`);
  });
  afterAll(() => {
    conn?.closeSync();
    db?.closeSync();
  });

  /** The records of one SELECT over `batch` (the view quote_heads_batch the caller sets per batch of tickers). */
  async function recordsOf(sql: string, batch: string): Promise<string[]> {
    await conn.run(`CREATE OR REPLACE TEMP VIEW quote_heads_batch AS ${batch}`);
    const rows = await queryRows(conn, `SELECT k, v FROM (${sql}) ORDER BY k`);
    return rows.map((r) => `${r.k}\t${r.v}`);
  }

  it('writes the same records byte for byte, from every bar and from tails, whole and per ticker', async () => {
    const nested = await read('./fixtures/derive-heads-nested.sql');
    const texts = await read('../../jobs/quotes/derive-heads.sql');
    const batches = [
      'SELECT * FROM heads_bars',
      // The tails: each chain's newest 31 bars only (its whole span from quote_heads_spans for AAA raw).
      'SELECT * FROM heads_bars QUALIFY row_number() OVER (PARTITION BY ticker, adjustment ORDER BY quote_date DESC) <= 31',
      `SELECT * FROM heads_bars WHERE ticker BETWEEN 'AAB' AND 'ABD'`,
    ];
    for (const batch of batches) {
      const before = await recordsOf(nested, batch);
      const after = await recordsOf(texts, batch);
      expect(after.length).toBeGreaterThan(0);
      expect(after).toEqual(before);
    }
    const all = await recordsOf(texts, 'SELECT * FROM heads_bars');
    expect(all).toHaveLength(6);
    const aab = JSON.parse(all.find((l) => l.includes('"ticker":"AAB"'))!.split('\t')[1]!);
    // A tie on the last date: raw first; AAB's stale days; AAA's newer adjusted chain first.
    expect(aab.chains.map((c: { adjustment: string }) => c.adjustment)).toEqual(['raw', 'split_dividend']);
    expect(aab.stale).toEqual({ n: 3, first: '2024-03-01', last: '2024-03-03' });
    const aaa = JSON.parse(all.find((l) => l.includes('"ticker":"AAA"'))!.split('\t')[1]!);
    expect(aaa.chains.map((c: { adjustment: string; tail: unknown[] }) => [c.adjustment, c.tail.length])).toEqual([
      ['split_dividend', 30],
      ['raw', 30],
    ]);
    const abc = JSON.parse(all.find((l) => l.includes('"ticker":"ABC"'))!.split('\t')[1]!);
    expect(abc.chains[0]).toMatchObject({ days: 1, parent_leaf_hash: null, tail: [] });
    const acc = JSON.parse(all.find((l) => l.includes('"ticker":"ACC"'))!.split('\t')[1]!);
    expect(acc.chains[0].part).toBeNull();
  });

  it('aggregates no nested struct in order: the plan has no ordered list', async () => {
    await conn.run('CREATE OR REPLACE TEMP VIEW quote_heads_batch AS SELECT * FROM heads_bars');
    const plan = (await queryRows(conn, `EXPLAIN ${await read('../../jobs/quotes/derive-heads.sql')}`))
      .map((r) => String(r.explain_value))
      .join('\n');
    expect(plan).toMatch(/arg_max\(/);
    // An ordered aggregate shows its sort keys as further arguments: list(#1, #2, ...).
    expect(plan).not.toMatch(/list\(#\d+,/);
    const before = (await queryRows(conn, `EXPLAIN ${await read('./fixtures/derive-heads-nested.sql')}`))
      .map((r) => String(r.explain_value))
      .join('\n');
    expect(before).toMatch(/list\(#\d+,/);
  });
});
