import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { RECORD_JSON_SQL, ROW_ORDER_SQL } from '../../jobs/quotes/quotes-fold.ts';
import { queryRows } from '../../lib/warehouse/duckdb.ts';
import { quoteRecord } from '../../ingest/quotes/chain.ts';
import { canonicalJson } from '../../lib/hash.ts';

// Prices of every scale, signs, the DECIMAL(18,6) extremes and NULL vwap / trade_count.
const PRICES = [
  '0',
  '5',
  '5.000000',
  '4.7',
  '4.70',
  '4.75',
  '121.73',
  '100.1',
  '100.10',
  '195.85',
  '0.5',
  '-0.5',
  '-12.340000',
  '0.000001',
  '0.00001',
  '0.0001',
  '1.000001',
  '12.3456',
  '99999.99999',
  '123456789012.123456',
  '999999999999.999999',
  '-999999999999.999999',
  '1000000',
];

describe('RECORD_JSON_SQL', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    conn = await db.connect();
    await conn.run(`CREATE TABLE i AS SELECT 'T' || k AS ticker, DATE '2024-06-10' AS quote_date, 'raw' AS adjustment,
        CAST(p AS DECIMAL(18,6)) AS open, CAST(p AS DECIMAL(18,6)) AS high, CAST(p AS DECIMAL(18,6)) AS low, CAST(p AS DECIMAL(18,6)) AS close,
        100::BIGINT AS volume, CASE WHEN k % 2 = 0 THEN CAST(p AS DECIMAL(18,6)) END AS vwap, CASE WHEN k % 3 = 0 THEN 7::BIGINT END AS trade_count
      FROM (SELECT unnest([${PRICES.map((p) => `'${p}'`).join(', ')}]) AS p, generate_subscripts([${PRICES.map((p) => `'${p}'`).join(', ')}], 1) AS k)`);
  });
  afterAll(() => {
    conn.closeSync();
    db.closeSync();
  });

  it('writes each price as its DECIMAL text without trailing zeros (the same bytes as rtrim of the cast)', async () => {
    const rows = await queryRows(conn, `SELECT CAST(close AS VARCHAR) AS d, ${RECORD_JSON_SQL} AS rec FROM i`);
    for (const r of rows) {
      const want = String(r.d).replace(/0+$/, '').replace(/\.$/, '');
      expect(String(r.rec)).toContain(`"close":${want},`);
    }
    expect(rows.map((r) => String(r.rec).match(/"close":([^,]+),/)![1])).toEqual([
      '0',
      '5',
      '5',
      '4.7',
      '4.7',
      '4.75',
      '121.73',
      '100.1',
      '100.1',
      '195.85',
      '0.5',
      '-0.5',
      '-12.34',
      '0.000001',
      '0.00001',
      '0.0001',
      '1.000001',
      '12.3456',
      '99999.99999',
      '123456789012.123456',
      '999999999999.999999',
      '-999999999999.999999',
      '1000000',
    ]);
  });

  it('equals the RFC 8785 text of quoteRecord for prices that are exact JS numbers', async () => {
    const rows = await queryRows(
      conn,
      `SELECT ticker, CAST(close AS VARCHAR) AS p, vwap IS NULL AS no_vwap, trade_count, ${RECORD_JSON_SQL} AS rec FROM i`,
    );
    for (const r of rows.filter((x) => Math.abs(Number(x.p)) < 1e9)) {
      const n = Number(r.p);
      const bar = {
        ticker: String(r.ticker),
        quote_date: '2024-06-10',
        adjustment: 'raw' as const,
        open: n,
        high: n,
        low: n,
        close: n,
        volume: 100,
        vwap: r.no_vwap ? null : n,
        trade_count: r.trade_count === null ? null : Number(r.trade_count),
      };
      expect(String(r.rec)).toBe(canonicalJson(quoteRecord(bar as never)));
    }
  });
});

describe('ROW_ORDER_SQL', () => {
  it('is true for a chain whose rows the aggregate saw in row order, each once, and false otherwise', async () => {
    const db = await DuckDBInstance.create(':memory:', { threads: '1' });
    const conn = await db.connect();
    try {
      // Chains A (rows 0-2) and C (row 5) in row order; B's rows 3 and 4 fed to the aggregate backwards; D's rows
      // 6 and 8 not one run (row 7 is E's).
      await conn.run(
        `CREATE TEMP TABLE quote_file_rows AS SELECT * FROM (VALUES ('A'), ('A'), ('A'), ('B'), ('B'), ('C'), ('D'), ('E'), ('D')) v(ticker)`,
      );
      const rows = (
        await conn.runAndReadAll(`SELECT ticker, ${ROW_ORDER_SQL} AS in_order
          FROM (SELECT * FROM (SELECT ticker, rowid AS "rowid" FROM quote_file_rows) ORDER BY CASE WHEN ticker = 'B' THEN -"rowid" ELSE "rowid" END) i
          GROUP BY ticker ORDER BY ticker`)
      ).getRowObjectsJson();
      expect(rows).toEqual([
        { ticker: 'A', in_order: true },
        { ticker: 'B', in_order: false },
        { ticker: 'C', in_order: true },
        { ticker: 'D', in_order: false },
        { ticker: 'E', in_order: true },
      ]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
