/**
 * FLAGS_SQL (jobs/quotes/quotes-fold.ts) gives every row the flags of its exact checks: its guard, which lets rows with
 * no flag through as `[]` without building the list, checks the two range conditions in DOUBLE with a margin (issue 22
 * item 3), stricter than the exact ones, so it may send a row to the list but never skip a flag. This compares it with
 * the list alone and with the guard as it was (DECIMAL(38,1) products, kept here) over crafted rows at the range bounds
 * (high exactly 1.2 times the highest of open, close and vwap, one millionth above and below; low likewise), signs,
 * zeros, NULLs, the DECIMAL(18,6) extremes, and generated rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { FLAGS_SQL } from '../../jobs/quotes/quotes-fold.ts';
import { queryRows } from '../../lib/warehouse/duckdb.ts';

/** The flags list alone (FLAGS_SQL's ELSE branch): what every row must get. */
const LIST_SQL = FLAGS_SQL.slice(FLAGS_SQL.indexOf('ELSE') + 'ELSE'.length, FLAGS_SQL.lastIndexOf('END'));

/** The guard before 2026-11-27: the exact range products. */
const EXACT_GUARD_SQL = `CASE WHEN c.high >= greatest(c.open, c.close) AND c.low <= least(c.open, c.close) AND c.high >= c.low AND c.volume >= 0
      AND c.high <= 1.2::DECIMAL(38,1) * greatest(c.open, c.close, coalesce(c.vwap, c.close)) AND c.low * 1.2::DECIMAL(38,1) >= least(c.open, c.close, coalesce(c.vwap, c.close))
      AND (c.vwap IS NULL OR (c.vwap <= c.high AND c.vwap >= c.low))
    THEN []::VARCHAR[] ELSE ${LIST_SQL} END`;

type Row = [open: string, high: string, low: string, close: string, volume: string, vwap: string | null];

/** Rows at the bounds of the range checks, around a highest price `m` (and a lowest `n`), with and without vwap. */
function boundRows(): Row[] {
  const rows: Row[] = [];
  for (const m of ['100', '5', '0.000005', '1', '123.456789', '8.333333', '83333333333.333335', '833333333333.333335', '600']) {
    // m in millionths (exact), then high = 1.2 * m (+ d) when that is a whole number of millionths, and low = m / 1.2 (+ d).
    const [int, frac = ''] = m.split('.');
    const m6 = BigInt(int!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
    for (const d of [-10n, -1n, 0n, 1n, 10n]) {
      if ((m6 * 12n) % 10n === 0n && m6 * 12n <= 9_999_999_999_999_999_990n) {
        const high = fmt((m6 * 12n) / 10n + d);
        rows.push([fmt(m6), high, fmt(m6), fmt(m6), '100', null], [fmt(m6), high, fmt(m6), fmt(m6), '100', fmt(m6)]);
      }
      if ((m6 * 10n) % 12n === 0n) {
        const lo = fmt((m6 * 10n) / 12n + d);
        rows.push([fmt(m6), fmt(m6), lo, fmt(m6), '100', null], [fmt(m6), fmt(m6), lo, fmt(m6), '100', fmt(m6)]);
      }
    }
  }
  return rows;
}

function fmt(millionths: bigint): string {
  const neg = millionths < 0n;
  const a = neg ? -millionths : millionths;
  return `${neg ? '-' : ''}${a / 1_000_000n}.${String(a % 1_000_000n).padStart(6, '0')}`;
}

const CRAFTED: Row[] = [
  ['10', '11', '9', '10.5', '1000', '10.2'],
  ['10', '12', '10', '10', '1000', null],
  ['10', '12.000001', '10', '10', '1000', null],
  ['0', '0', '0', '0', '0', null],
  ['0', '0', '0', '0', '0', '0'],
  ['-1', '-0.9', '-1.1', '-1', '5', '-1'],
  ['-1', '-1', '-1', '-1', '5', null],
  ['1', '1', '0.833333', '1', '5', null],
  ['1', '1', '0.833334', '1', '5', null],
  ['1', '1.2', '0.833334', '1', '5', '1'],
  ['1', '1.2', '0.833334', '1', '5', '1.2'],
  ['1', '1.2', '0.833334', '1', '5', '1.200001'],
  ['1', '1', '1', '1', '-5', null],
  ['5', '4', '3', '4.5', '10', null],
  ['5', '6', '5.5', '4.5', '10', null],
  ['5', '6', '7', '5', '10', null],
  ['999999999999.999999', '999999999999.999999', '999999999999.999999', '999999999999.999999', '1', '999999999999.999999'],
  ['-999999999999.999999', '999999999999.999999', '-999999999999.999999', '0', '1', null],
  ['0.000001', '0.000001', '0.000001', '0.000001', '1', null],
  ['0.000001', '0.000002', '0.000001', '0.000001', '1', null],
];

describe('FLAGS_SQL', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    conn = await db.connect();
    const rows = [...CRAFTED, ...boundRows()];
    const lit = (x: string | null) => (x === null ? 'NULL' : `'${x}'`);
    await conn.run(`CREATE TABLE crafted AS SELECT open::DECIMAL(18,6) AS open, high::DECIMAL(18,6) AS high, low::DECIMAL(18,6) AS low,
        close::DECIMAL(18,6) AS close, volume::BIGINT AS volume, vwap::DECIMAL(18,6) AS vwap
      FROM (VALUES ${rows.map((r) => `(${r.map(lit).join(', ')})`).join(', ')}) t(open, high, low, close, volume, vwap)`);
    // Generated rows around a close, every check near its bound now and then (prices of 0 to 6 decimals).
    await conn.run(`CREATE TABLE generated AS
      SELECT round(c * (1 + ((hash(i, 1) % 2001)::BIGINT - 1000) / 5000.0), (hash(i, 7) % 7)::INTEGER)::DECIMAL(18,6) AS open,
             round(c * (1 + (hash(i, 2) % 2600) / 10000.0), (hash(i, 8) % 7)::INTEGER)::DECIMAL(18,6) AS high,
             round(c * (1 - (hash(i, 3) % 2600) / 10000.0), (hash(i, 9) % 7)::INTEGER)::DECIMAL(18,6) AS low,
             c::DECIMAL(18,6) AS close, (hash(i, 4) % 1000)::BIGINT - 5 AS volume,
             CASE WHEN hash(i, 5) % 5 = 0 THEN NULL ELSE round(c * (1 + ((hash(i, 6) % 2001)::BIGINT - 1000) / 4000.0), 6)::DECIMAL(18,6) END AS vwap
      FROM (SELECT i, round(0.01 + (hash(i) % 100000) / 100.0, 2) AS c FROM range(200000) r(i))`);
  });
  afterAll(() => {
    conn.closeSync();
    db.closeSync();
  });

  for (const table of ['crafted', 'generated'])
    it(`gives the flags list's flags and the exact guard's on the ${table} rows`, async () => {
      const [r] = await queryRows(
        conn,
        `SELECT count(*)::BIGINT AS n,
           count(*) FILTER (WHERE (${FLAGS_SQL}) IS DISTINCT FROM (${LIST_SQL}))::BIGINT AS vs_list,
           count(*) FILTER (WHERE (${FLAGS_SQL}) IS DISTINCT FROM (${EXACT_GUARD_SQL}))::BIGINT AS vs_exact,
           count(*) FILTER (WHERE len(${LIST_SQL}) > 0)::BIGINT AS flagged,
           count(*) FILTER (WHERE len(${LIST_SQL}) = 0)::BIGINT AS clean
         FROM ${table} c`,
      );
      expect({ vs_list: Number(r.vs_list), vs_exact: Number(r.vs_exact) }).toEqual({ vs_list: 0, vs_exact: 0 });
      // Both kinds of row are there (the comparison says something about each).
      expect(Number(r.flagged)).toBeGreaterThan(5);
      expect(Number(r.clean)).toBeGreaterThan(5);
    });

  it('flags the rows just past each range bound and not those on it', async () => {
    const rows = await queryRows(
      conn,
      `SELECT high::VARCHAR AS high, low::VARCHAR AS low, (${FLAGS_SQL}) AS flags FROM crafted c WHERE open = 1 AND close = 1 AND vwap IS NULL`,
    );
    const by = new Map(rows.map((r) => [`${r.high}/${r.low}`, (r.flags as string[]).join(',')]));
    expect(by.get('1.200000/0.833334')).toBe(undefined); // not in this selection (vwap given)
    expect(by.get('1.000000/0.833334')).toBe('');
    expect(by.get('1.000000/0.833333')).toBe('low_below_range');
    expect(by.get('1.200000/1.000000')).toBe('');
    expect(by.get('1.200001/1.000000')).toBe('high_above_range');
  });
});
