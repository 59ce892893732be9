/**
 * Product launches from 10-K product lists (jobs/registry/derive-product-launches.sql, issue 19): a product line a
 * company's 10-K names that its previous 10-K did not is a `product_launch` timeline event; a company's first 10-K
 * launches nothing. Run on the registry's own table definitions in an in-memory DuckDB.
 */
import { readFileSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const sql = (f: string) => readFileSync(new URL(`../../jobs/registry/${f}`, import.meta.url), 'utf8');

let db: DuckDBInstance;
let conn: DuckDBConnection;

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  await conn.run(sql('tables.sql'));
  const filing = (acc: string, filed: string, period: string) =>
    `(320193, '${acc}', '10-K', DATE '${filed}', DATE '${period}', NULL, NULL, NULL, NULL, [], NULL, NULL, NULL, 'aapl-${filed}.htm', NULL, 'f-${acc}')`;
  await conn.run(
    `INSERT INTO filings VALUES ${filing('0000320193-24-000001', '2024-11-01', '2024-09-28')}, ${filing('0000320193-25-000002', '2025-10-31', '2025-09-27')}`,
  );
  const product = (acc: string, name: string) =>
    `('sha-${acc}', 320193, '${acc}', 'product', '${name}', NULL, '${name} is one of the Company''s principal product lines.', 'Item 1', 'leaf-${acc}-${name}', '{}')`;
  await conn.run(
    `INSERT INTO profile_facts VALUES ${[
      product('0000320193-24-000001', 'iPhone'),
      product('0000320193-24-000001', 'Mac'),
      product('0000320193-25-000002', 'iPhone'),
      product('0000320193-25-000002', 'mac'),
      product('0000320193-25-000002', 'Vision Pro'),
      // Another company with a single 10-K: nothing is new to it.
      `('sha-x', 1045810, '0001045810-25-000009', 'product', 'GPUs', NULL, NULL, 'Item 1', 'leaf-x', '{}')`,
    ].join(', ')}`,
  );
  await conn.run(
    `INSERT INTO documents VALUES ('sha-x', 1045810, '0001045810-25-000009', '10-K', 'nvda.htm', '10-K', NULL, DATE '2025-02-26', NULL, 'extracted', NULL, NULL, 'd', '{}')`,
  );
  await conn.run(sql('derive-product-launches.sql'));
});
afterAll(() => {
  conn?.closeSync();
});

describe('product launches from 10-K product lists', () => {
  it('a product line new in a 10-K is one product_launch event dated by its report period, with its fact leaf', async () => {
    const rows = (await conn.runAndReadAll(`SELECT * FROM timeline ORDER BY cik, accession`)).getRowObjectsJson();
    expect(rows).toEqual([
      {
        cik: 320193,
        accession: '0000320193-25-000002',
        form: '10-K',
        item: '10-K products',
        event_type: 'product_launch',
        title: 'New product line: Vision Pro',
        summary:
          "New among the principal product lines in this 10-K (not in the previous one): Vision Pro is one of the Company's principal product lines.",
        event_date: '2025-09-27',
        filing_date: '2025-10-31',
        document_url: 'https://www.sec.gov/Archives/edgar/data/320193/000032019325000002/aapl-2025-10-31.htm',
        basis: 'document',
        origin_leaf_hash: 'leaf-0000320193-25-000002-Vision Pro',
      },
    ]);
  });
});
