/**
 * The packed per-DOT and per-VIN stores of the per-carrier routes (issue 22; jobs/fmcsa/serving-stores.ts): crashes,
 * inspections, identity filings, safety and enforcement: every answer equals, byte for byte, the one of the SQL they
 * replace (get-crash-page.sql, count-crashes.sql, the inspection, violation, unit, authority, insurance, SMS, OOS,
 * enforcement and revocation queries), pages included; and with the stores published the routes read no parquet
 * (no DuckDB query at all once the snapshot's metadata is cached). No timings: speed is `npm run bench -- endpoints`.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { storePasses } from '../../jobs/fmcsa/serving-stores.ts';
import { textKey } from '../../lib/warehouse/packed-store.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { getCarrier, getCarrierSafety, getCrashes, getEnforcement, getInspections } from '../../service/carriers/carriers.queries.ts';
import { buildTestService, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const STORES = ['crash_by_dot', 'crash_by_vin', 'inspection_by_dot', 'carrier_filings', 'carrier_records'];

/** The same reader with the crash and inspection stores hidden: the routes answer from their SQL. */
function withoutStores(r: SnapshotReader): SnapshotReader {
  return Object.create(r, { packed: { value: (name: string) => (STORES.includes(name) ? null : r.packed(name)) } }) as SnapshotReader;
}

// Written in one pass per store (the default at this size), and in passes over key ranges of ~100 KB of JSON each
// (several per store, as at full scale).
describe.each([
  ['one pass', storePasses.bytes],
  ['passes of 100 KB', 100_000],
])('FMCSA per-carrier stores over a generated sample, %s', (_name, passBytes) => {
  let root: string;
  let svc: TestService;
  let fmcsa: SnapshotReader;
  let sqlOnly: SnapshotReader;

  beforeAll(async () => {
    root = await tempDir('fmcsa-stores-');
    const saved = storePasses.bytes;
    storePasses.bytes = passBytes;
    const config = await ingestSmallFmcsa(root, path.join(root, 'data'), {}, 3000).finally(() => {
      storePasses.bytes = saved;
    });
    svc = await buildTestService(config, ['fmcsa']);
    fmcsa = svc.deps.readers.fmcsa!;
    sqlOnly = withoutStores(fmcsa);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  /** Every page of `ask` from both readers, following next_cursor: equal JSON at each step. */
  async function expectSamePages(ask: (r: SnapshotReader, cursor?: string) => Promise<{ next_cursor: string | null }>) {
    let cursor: string | undefined;
    let pages = 0;
    do {
      const got = await ask(fmcsa, cursor);
      const want = await ask(sqlOnly, cursor);
      expect(JSON.stringify(got)).toBe(JSON.stringify(want));
      cursor = got.next_cursor ?? undefined;
      pages++;
    } while (cursor && pages < 6);
  }

  it('publishes the five stores', () => {
    for (const s of STORES) expect(fmcsa.packed(s), s).not.toBeNull();
  });

  it('answers crashes by DOT as the SQL does: rows, order, counts and pages', async () => {
    const dots = await fmcsa.query(
      `(SELECT dot_number FROM crashes WHERE dot_number IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 5)
       UNION ALL (SELECT dot_number FROM carriers ORDER BY hash(dot_number) LIMIT 25)`,
    );
    expect(dots.length).toBeGreaterThan(20);
    for (const { dot_number } of dots) {
      const dot = Number(dot_number);
      await expectSamePages((r, cursor) => getCrashes(r, { dot, cursor }));
      await expectSamePages((r, cursor) => getCrashes(r, { dot, limit: 3, cursor }));
    }
  });

  it('answers crashes by VIN as the SQL does, an unknown VIN with none', async () => {
    const vins = await fmcsa.query(
      `(SELECT vin FROM crashes WHERE regexp_matches(vin, '^[A-HJ-NPR-Z0-9]{11,17}$') GROUP BY 1 ORDER BY count(*) DESC, vin LIMIT 5)
       UNION ALL (SELECT vin FROM crashes WHERE regexp_matches(vin, '^[A-HJ-NPR-Z0-9]{11,17}$') ORDER BY hash(vin) LIMIT 25)`,
    );
    expect(vins.length).toBe(30);
    for (const { vin } of vins) {
      await expectSamePages((r, cursor) => getCrashes(r, { vin: String(vin), cursor }));
      await expectSamePages((r, cursor) => getCrashes(r, { vin: String(vin).toLowerCase(), limit: 1, cursor }));
    }
    const unknown = await getCrashes(fmcsa, { vin: '1FUJA6CK99DA00000' });
    expect(unknown).toMatchObject({ total_crashes: 0, vehicles: [], next_cursor: null });
    expect(JSON.stringify(unknown)).toBe(JSON.stringify(await getCrashes(sqlOnly, { vin: '1FUJA6CK99DA00000' })));
  });

  it('answers inspections with their violations and units as the SQL does, pages included', async () => {
    const dots = await fmcsa.query(
      `(SELECT dot_number FROM inspections WHERE dot_number IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 5)
       UNION ALL (SELECT dot_number FROM carriers ORDER BY hash(dot_number) LIMIT 25)`,
    );
    for (const { dot_number } of dots) {
      const dot = Number(dot_number);
      await expectSamePages((r, cursor) => getInspections(r, dot, { cursor }));
      await expectSamePages((r, cursor) => getInspections(r, dot, { limit: 2, cursor }));
    }
  });

  it('answers a carrier identity with its authority and insurance filings as the SQL does', async () => {
    const dots = await fmcsa.query(
      `(SELECT dot_number FROM authority WHERE dot_number IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 5)
       UNION ALL (SELECT dot_number FROM carriers ORDER BY (docket2 IS NOT NULL) DESC, hash(dot_number) LIMIT 40)`,
    );
    let withInsurance = 0;
    for (const { dot_number } of dots) {
      const dot = Number(dot_number);
      const got = await getCarrier(fmcsa, dot).catch((e: Error) => e);
      const want = await getCarrier(sqlOnly, dot).catch((e: Error) => e);
      expect(JSON.stringify(got)).toBe(JSON.stringify(want));
      if (!(got instanceof Error) && got.insurance.length > 0) withInsurance++;
    }
    expect(withInsurance).toBeGreaterThan(0);
  });

  it('answers safety (SMS rows) and enforcement (OOS orders, cases, revocations) as the SQL does', async () => {
    const dots = await fmcsa.query(
      `(SELECT dot_number FROM revocations WHERE dot_number IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 5)
       UNION ALL (SELECT dot_number FROM oos_orders WHERE dot_number IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 5)
       UNION ALL (SELECT dot_number FROM sms_basics GROUP BY 1 ORDER BY hash(dot_number) LIMIT 10)
       UNION ALL (SELECT dot_number FROM carriers ORDER BY hash(dot_number) LIMIT 20)`,
    );
    let records = 0;
    for (const { dot_number } of dots) {
      const dot = Number(dot_number);
      for (const ask of [getCarrierSafety, getEnforcement] as Array<(r: SnapshotReader, d: number) => Promise<unknown>>) {
        const got = await ask(fmcsa, dot).catch((e: Error) => e);
        expect(JSON.stringify(got)).toBe(JSON.stringify(await ask(sqlOnly, dot).catch((e: Error) => e)));
      }
      const e = await getEnforcement(fmcsa, dot).catch(() => null);
      records += (e?.revocations.records.length ?? 0) + (e?.oos_orders.records.length ?? 0);
    }
    expect(records).toBeGreaterThan(0);
  });

  it('reads no parquet: with the stores, crash, VIN, inspection, identity, safety and enforcement answers run no DuckDB query', async () => {
    const [{ dot, vin }] = await fmcsa.query(
      `SELECT dot_number AS dot, any_value(vin) AS vin FROM crashes WHERE dot_number IS NOT NULL AND vin IS NOT NULL GROUP BY 1 ORDER BY hash(dot) LIMIT 1`,
    );
    // Warm the per-snapshot metadata (dataset status, column names), read once per snapshot.
    await getCrashes(fmcsa, { dot: Number(dot) });
    await getInspections(fmcsa, Number(dot));
    await getCarrier(fmcsa, Number(dot));
    await getCarrierSafety(fmcsa, Number(dot));
    await getEnforcement(fmcsa, Number(dot));
    const query = vi.spyOn(fmcsa, 'query');
    try {
      const crashes = await getCrashes(fmcsa, { dot: Number(dot) });
      const byVin = await getCrashes(fmcsa, { vin: String(vin) });
      const inspections = await getInspections(fmcsa, Number(dot));
      const carrier = await getCarrier(fmcsa, Number(dot));
      await getCarrierSafety(fmcsa, Number(dot));
      await getEnforcement(fmcsa, Number(dot));
      expect(carrier.dot_number).toBe(Number(dot));
      expect(crashes.total_crashes).toBeGreaterThan(0);
      expect(byVin.total_crashes).toBeGreaterThan(0);
      expect(inspections.dot_number).toBe(Number(dot));
      expect(query).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
    }
  });

  it('keys VINs by 28 bits of their MD5, the same in DuckDB and Node', async () => {
    const rows = await fmcsa.query(
      `SELECT vin, ('0x' || left(md5(vin), 7))::INTEGER AS k FROM crashes WHERE vin IS NOT NULL ORDER BY hash(vin) LIMIT 50`,
    );
    for (const { vin, k } of rows) expect(textKey(String(vin))).toBe(Number(k));
  });
});
