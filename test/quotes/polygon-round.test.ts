/**
 * The Polygon load rounds prices (`x * 1e6`) and counts as JS's Math.round does (jobs/quotes/quotes.pipeline.ts
 * mathRoundSql): DuckDB's `round` for x ≥ 0, cheaper than the `floor`/`ceil` form it replaced (issue 22 item 3), which
 * negative values and NaN still take. Both forms must give Math.round's value, sign of zero included, for every double:
 * here at the ties and their neighbours, past 2^52 (where every double is whole) and 2^53, at the infinities and NaN,
 * for prices times 1e6 near a tie at the sixth decimal, and for generated values.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { wholeCount } from '../../ingest/quotes/formats.ts';
import { BIGINT_DOUBLE_SQL, mathRoundFloorSql, mathRoundSql } from '../../jobs/quotes/quotes.pipeline.ts';

/** The doubles next to `x` (one ulp either side). */
function neighbours(x: number): number[] {
  const f = new Float64Array([x]);
  const b = new BigInt64Array(f.buffer);
  const out: number[] = [];
  for (const d of [-1n, 1n]) {
    const g = new BigInt64Array([b[0]! + d]);
    out.push(new Float64Array(g.buffer)[0]!);
  }
  return out;
}

function values(): number[] {
  const xs = [0, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 1, -1, 1e-300, -1e-300];
  for (const p of [52, 53, 54, 62, 63, 70])
    for (const s of [1, -1]) xs.push(s * 2 ** p, s * (2 ** p + 2), s * (2 ** p - 1), s * (2 ** p - 0.5));
  xs.push(4503599627370495.5, -4503599627370495.5, 1e15 + 0.5, -(1e15 + 0.5), 1e22, -1e22, Number.MAX_VALUE, -Number.MAX_VALUE);
  xs.push(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN);
  // Ties and near-ties, and prices with 7 decimals (ties at the sixth) times 1e6, as the load computes them.
  for (const k of [0, 1, 2, 7, 1234567, 999999999999]) for (const t of [k + 0.5, -(k + 0.5)]) xs.push(t, ...neighbours(t));
  for (const p of ['1.2345675', '2.0000005', '0.0000005', '-0.0000005', '123456.7891235', '99999.9999995', '4503599627.3704995'])
    for (const x of [Number(p), ...neighbours(Number(p))]) xs.push(x * 1e6);
  // Generated: uniform, around ties, and across magnitudes (a fixed generator, the same values every run).
  let s = 0x2545f491;
  const rand = () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
    return (s >>> 0) / 2 ** 32;
  };
  for (let i = 0; i < 20_000; i++) {
    xs.push((rand() - 0.5) * 2e6, Math.floor((rand() - 0.5) * 1e9) + 0.5, (rand() - 0.5) * 10 ** Math.floor(rand() * 30));
    xs.push((Math.round(rand() * 1e8) / 1e2) * 1e6, ((Math.round(rand() * 1e9) + 0.5) / 1e7) * 1e6);
  }
  return xs;
}

const literal = (x: number) =>
  Number.isNaN(x)
    ? `'nan'::DOUBLE`
    : x === Number.POSITIVE_INFINITY
      ? `'inf'::DOUBLE`
      : x === Number.NEGATIVE_INFINITY
        ? `'-inf'::DOUBLE`
        : `'${Object.is(x, -0) ? '-0.0' : String(x)}'::DOUBLE`;

describe('Math.round in SQL', () => {
  it('gives Math.round of every value in both forms, the sign of zero included', async () => {
    const xs = values();
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(`CREATE TABLE v (i INTEGER, x DOUBLE)`);
      for (let i = 0; i < xs.length; i += 5_000)
        await conn.run(
          `INSERT INTO v VALUES ${xs
            .slice(i, i + 5_000)
            .map((x, j) => `(${i + j}, ${literal(x)})`)
            .join(', ')}`,
        );
      const reader = await conn.runAndReadAll(
        `SELECT x, ${mathRoundSql('x')} AS fast, ${mathRoundFloorSql('x')} AS floor FROM v ORDER BY i`,
      );
      const rows = reader.getRows() as Array<[number, number, number]>;
      expect(rows.length).toBe(xs.length);
      const wrong = rows.flatMap(([x, fast, floor], i) => {
        const want = Math.round(xs[i]!);
        return Object.is(x, xs[i]) && Object.is(fast, want) && Object.is(floor, want) ? [] : [{ x: xs[i], read: x, want, fast, floor }];
      });
      expect(wrong).toEqual([]);
      // A volume is kept when its rounding fits BIGINT: the load tests the DOUBLE (BIGINT_DOUBLE_SQL) and stores the
      // TRY_CAST of the rounding; the JS parser (wholeCount) decides the same for every value, 2^62 to 2^70 included.
      const fits = await conn.runAndReadAll(
        `SELECT ${BIGINT_DOUBLE_SQL('x')} AS test, TRY_CAST(${mathRoundSql('x')} AS BIGINT) IS NOT NULL AS cast FROM v ORDER BY i`,
      );
      const disagree = (fits.getRows() as Array<[boolean, boolean]>).flatMap(([test, cast], i) =>
        test === cast && cast === (wholeCount(xs[i]!) !== null) ? [] : [{ x: xs[i], test, cast, js: wholeCount(xs[i]!) }],
      );
      expect(disagree).toEqual([]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
