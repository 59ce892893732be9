import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { basicsOverThresholdSql } from '../../ingest/fmcsa/risk-model.ts';
import { loadSql, queryRows } from '../../lib/warehouse/duckdb.ts';

/**
 * The identity signals of derive-risk-features.sql (chameleon-carrier
 * pattern) on hand-built carriers: which keys count as the same, which are
 * ignored, and the cap on widely shared keys. The SQL hashes every key first
 * and groups strings exactly only for repeated hashes, with a replace() fast
 * path for the usual phone and street forms: these cases pin that the result
 * equals the documented rule.
 */
const FEATURES_SQL = loadSql('../../jobs/fmcsa/derive-risk-features.sql', import.meta.url).replace(
  '/*BASICS_OVER_THRESHOLD*/0',
  basicsOverThresholdSql(),
);
const TABLES_SQL = loadSql('../../jobs/fmcsa/tables.sql', import.meta.url);

let db: DuckDBInstance;
let conn: DuckDBConnection;

interface C {
  dot: number;
  phone?: string | null;
  email?: string | null;
  street?: string | null;
  zip?: string | null;
}

const CARRIERS: C[] = [
  // Phone: punctuation and spacing differ, digits equal → shared (the fast path and the regular expression must agree).
  { dot: 101, phone: '(555) 123-4567' },
  { dot: 102, phone: '555.123.4567' },
  { dot: 103, phone: '+1 555 123 4567' }, // 11 digits: a different key from the 10-digit ones
  { dot: 104, phone: '1-555-123-4567' }, // same 11 digits as 103
  // Placeholders and short numbers are never identity.
  { dot: 111, phone: '(000) 000-0000' },
  { dot: 112, phone: '0000000000' },
  { dot: 113, phone: '(999) 999-9999' },
  { dot: 114, phone: '9999999999' },
  { dot: 115, phone: '123-4567' },
  { dot: 116, phone: '1234567' },
  { dot: 117, phone: '(123) 456-7890' },
  { dot: 118, phone: '1234567890' },
  // E-mail: as loaded (the readers store lower(trim())), needs an '@'.
  { dot: 121, email: 'dispatch@acme.com' },
  { dot: 122, email: 'dispatch@acme.com' },
  { dot: 123, email: 'none' },
  { dot: 124, email: 'none' },
  // Address: letters and digits of the street, upper case, + the ZIP's first five characters.
  { dot: 131, street: '12 MAIN ST', zip: '30301' },
  { dot: 132, street: '12 Main St.', zip: '30301-1234' },
  { dot: 133, street: '12 MAIN ST', zip: '30302' }, // another ZIP
  { dot: 134, street: '12 MAIN ST #4', zip: '30301' }, // another street
  { dot: 135, street: '12 MAIN ST', zip: null }, // no ZIP: no address key
  // A revoked carrier sharing a phone with 142: the chameleon signal.
  { dot: 141, phone: '(404) 555-0101' },
  { dot: 142, phone: '404-555-0101' },
  // VIN shared through a crash (152) and an inspection unit (151); a short VIN is ignored.
  { dot: 151 },
  { dot: 152 },
  { dot: 153 },
  { dot: 154 },
];
// 51 carriers on one phone: more than 50 holders say nothing about one carrier.
for (let i = 0; i < 51; i++) CARRIERS.push({ dot: 200 + i, phone: '(800) 555-0000' });

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  await conn.run(TABLES_SQL);
  const values = CARRIERS.map(
    (c) =>
      `(${c.dot}, 'CARRIER ${c.dot}', ${lit(c.phone)}, ${lit(c.email)}, ${lit(c.street)}, ${lit(c.zip)}, 'A', DATE '2020-01-01', DATE '2026-01-01', 3, 'company_census')`,
  );
  await conn.run(
    `INSERT INTO carriers (dot_number, legal_name, phone, email_address, phy_street, phy_zip, status_code, add_date, mcs150_date, power_units, census_format) VALUES ${values.join(', ')}`,
  );
  await conn.run(
    `INSERT INTO revocations (dot_number, docket_number, revocation_type, serve_date, effective_date, involuntary) VALUES (141, 'MC1', 'INVOLUNTARY REVOCATION', DATE '2026-01-01', DATE '2026-02-01', true)`,
  );
  await conn.run(
    `INSERT INTO crashes (crash_id, dot_number, report_date, vin) VALUES (1, 152, DATE '2026-03-01', '1FUJGLDR0CLBP8834'), (2, 153, DATE '2026-03-01', 'ABC123'), (3, 154, DATE '2026-03-01', 'ABC123')`,
  );
  await conn.run(`INSERT INTO inspections (inspection_id, dot_number, insp_date, insp_level_id) VALUES (10, 151, DATE '2026-04-01', 1)`);
  await conn.run(`INSERT INTO inspection_units (inspection_id, insp_unit_id, vin) VALUES (10, 1, '1FUJGLDR0CLBP8834')`);
  await conn.run(FEATURES_SQL);
});

afterAll(() => {
  conn?.closeSync();
  db?.closeSync();
});

function lit(v: string | null | undefined): string {
  return v == null ? 'NULL' : `'${v.replace(/'/g, "''")}'`;
}

async function shared(dot: number): Promise<Record<string, number>> {
  const [r] = await queryRows(
    conn,
    `SELECT shared_phone_carriers AS phone, shared_email_carriers AS email, shared_address_carriers AS address, shared_vin_carriers AS vin, shared_with_revoked_carriers AS revoked FROM carrier_risk_features WHERE dot_number = $dot`,
    { dot },
  );
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
}

describe('identity keys (derive-risk-features.sql)', () => {
  it('treats phones with the same digits as one key, whatever the punctuation', async () => {
    expect(await shared(101)).toMatchObject({ phone: 1 });
    expect(await shared(102)).toMatchObject({ phone: 1 });
    expect(await shared(103)).toMatchObject({ phone: 1 });
    expect(await shared(104)).toMatchObject({ phone: 1 });
  });

  it('ignores placeholder and short phone numbers', async () => {
    for (const dot of [111, 112, 113, 114, 115, 116, 117, 118]) expect(await shared(dot)).toMatchObject({ phone: 0 });
  });

  it('matches e-mail addresses that contain an @ only', async () => {
    expect(await shared(121)).toMatchObject({ email: 1 });
    expect(await shared(123)).toMatchObject({ email: 0 });
  });

  it('matches an address on the street letters and digits plus the 5-digit ZIP', async () => {
    expect(await shared(131)).toMatchObject({ address: 1 });
    expect(await shared(132)).toMatchObject({ address: 1 });
    for (const dot of [133, 134, 135]) expect(await shared(dot)).toMatchObject({ address: 0 });
  });

  it('links a carrier sharing a key with a revoked one (chameleon) and not the revoked one itself', async () => {
    expect(await shared(142)).toMatchObject({ phone: 1, revoked: 1 });
    expect(await shared(141)).toMatchObject({ phone: 1, revoked: 0 });
  });

  it('matches VINs across crash and inspection files and ignores VINs shorter than 11 characters', async () => {
    expect(await shared(151)).toMatchObject({ vin: 1 });
    expect(await shared(152)).toMatchObject({ vin: 1 });
    expect(await shared(153)).toMatchObject({ vin: 0 });
  });

  it('skips a key held by more than 50 carriers', async () => {
    expect(await shared(200)).toMatchObject({ phone: 0 });
  });
});
