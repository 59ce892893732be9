import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashCanonical } from '../../lib/hash.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { generateFmcsaSample, SAMPLE_DOT_BASE } from '../../ingest/fmcsa/fmcsa.sample.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const CARRIERS = 3000;

describe('carrier routes over a generated FMCSA sample', () => {
  let root: string;
  let inputDir: string;
  let svc: TestService;

  beforeAll(async () => {
    root = await tempDir('fmcsa-svc-');
    inputDir = path.join(root, 'input');
    const config = await ingestSmallFmcsa(root, path.join(root, 'data'), {}, CARRIERS);
    svc = await buildTestService(config, ['fmcsa']);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  it('generates files in the real formats, deterministic in the seed', async () => {
    const census = await readFile(path.join(inputDir, 'fmcsa/census/Company_Census_File.csv'), 'utf8');
    expect(census.split('\n')[0].split(',')).toHaveLength(147);
    expect(census.split('\n').length - 2).toBe(CARRIERS);
    const rev = (await readFile(path.join(inputDir, 'fmcsa/licensing/revocation_2026_11_20.txt'), 'utf8')).split('\n');
    expect(rev[1]).toMatch(/^"MC\d+","0\d{7}","COMMON","\d\d\/\d\d\/\d{4}","(IN)?VOLUNTARY REVOCATION","\d\d\/\d\d\/\d{4}"$/);
    const again: string[] = [];
    for await (const f of generateFmcsaSample({ scale: 'small', seed: 42, carriers: 50 }))
      if (f.path.endsWith('.csv') && typeof f.content !== 'string' && !(f.content instanceof Uint8Array))
        for await (const c of f.content as AsyncIterable<string>) again.push(String(c));
    const once: string[] = [];
    for await (const f of generateFmcsaSample({ scale: 'small', seed: 42, carriers: 50 }))
      if (f.path.endsWith('.csv') && typeof f.content !== 'string' && !(f.content instanceof Uint8Array))
        for await (const c of f.content as AsyncIterable<string>) once.push(String(c));
    expect(again.join('')).toBe(once.join(''));
  });

  it('has realistic inspection and OOS distributions and chameleon pairs', async () => {
    const { body } = await getJson(svc.app, '/api/fmcsa/status');
    expect(body.datasets.find((d: any) => d.dataset === 'census').records).toBe(CARRIERS);
    const r = svc.deps.readers.fmcsa;
    const [s] = await r.query(
      `SELECT avg((inspections_24m > 0)::INT) AS inspected, sum(driver_oos_24m) / sum(driver_inspections_24m) AS drv, sum(vehicle_oos_24m) / sum(vehicle_inspections_24m) AS veh, count(*) FILTER (WHERE shared_with_revoked_carriers > 0)::INTEGER AS chameleons FROM carrier_risk`,
    );
    expect(Number(s.inspected)).toBeGreaterThan(0.12);
    expect(Number(s.inspected)).toBeLessThan(0.3);
    expect(Number(s.drv)).toBeGreaterThan(0.035);
    expect(Number(s.drv)).toBeLessThan(0.085);
    expect(Number(s.veh)).toBeGreaterThan(0.18);
    expect(Number(s.veh)).toBeLessThan(0.32);
    expect(s.chameleons).toBeGreaterThan(0);
    // VINs join inspection units and crashes.
    const [{ n }] = await r.query(`SELECT count(*)::INTEGER AS n FROM crashes c JOIN inspection_units u USING (vin)`);
    expect(n).toBeGreaterThan(0);
  });

  it('GET /api/carriers searches by name, state, dot and mc', async () => {
    const byName = await getJson(svc.app, '/api/carriers?name=eagle&limit=5');
    expect(byName.status).toBe(200);
    expect(byName.body.total).toBeGreaterThan(0);
    expect(byName.body.results[0].legal_name).toMatch(/EAGLE/);
    const dot = SAMPLE_DOT_BASE + 7;
    const byDot = await getJson(svc.app, `/api/carriers?dot=${dot}`);
    expect(byDot.body.results.map((x: any) => x.dot_number)).toEqual([dot]);
    const mc = byName.body.results.find((x: any) => x.mc_number)?.mc_number as string;
    const byMc = await getJson(svc.app, `/api/carriers?mc=${mc.replace('MC', 'MC-')}`);
    expect(byMc.body.results[0].mc_number).toBe(mc);
    expect((await getJson(svc.app, '/api/carriers')).status).toBe(400);
    const bad = await getJson(svc.app, '/api/carriers?state=Texas');
    expect(bad).toMatchObject({ status: 400, body: { parameter: 'state' } });
  });

  it('GET /api/carrier/{dot}/snapshot returns features, the assessment and its inputs', async () => {
    const flagged = await getJson(svc.app, '/api/red-flags?code=CHAMELEON_LINK&limit=1');
    const dot = flagged.body.results[0].dot_number;
    const { status, body } = await getJson(svc.app, `/api/carrier/${dot}/snapshot`);
    expect(status).toBe(200);
    expect(body.assessment.red_flags.map((f: any) => f.code)).toContain('CHAMELEON_LINK');
    expect(body.assessment.recommendation).toBe('REJECT');
    expect(body.assessment.model_version).toMatch(/^fmcsa-risk-/);
    expect(body.inputs.length).toBeGreaterThanOrEqual(10);
    for (const i of body.inputs) expect(i.content_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(body.inputs.find((i: any) => i.dataset === 'fmcsa/inspection').as_of).toMatch(/^2026-/);
    expect(verifyLeaf(body.origin)).toBe(true);
    expect(body.origin).toMatchObject({ kind: 'snapshot', source: 'fmcsa/carrier_risk', record_sha256: hashCanonical(body.features) });
  });

  it('serves the snapshot from the packed store with exactly the row DuckDB builds from carrier_risk (first, last, missing DOT)', async () => {
    const reader = svc.deps.readers.fmcsa;
    const store = reader.packed('carrier_snapshot');
    expect(store?.size).toBe(CARRIERS);
    const cols = (await reader.query('SELECT name FROM carrier_snapshot_columns ORDER BY pos'))
      .map((r) => `"${String(r.name)}"`)
      .join(', ');
    const first = SAMPLE_DOT_BASE;
    const last = SAMPLE_DOT_BASE + CARRIERS - 1;
    for (const dot of [first, first + 1, SAMPLE_DOT_BASE + 1234, last]) {
      const [row] = await reader.query(`SELECT json_array(${cols})::VARCHAR AS v FROM carrier_risk WHERE dot_number = $dot`, { dot });
      expect(await store!.get(dot)).toBe(row.v);
      const res = await getJson(svc.app, `/api/carrier/${dot}/snapshot`);
      expect(res.status).toBe(200);
      expect(res.body.dot_number).toBe(dot);
      expect(res.body.features.dot_number).toBe(dot);
    }
    expect(await store!.get(first - 1)).toBeNull();
    expect(await store!.get(last + 1)).toBeNull();
    expect((await getJson(svc.app, `/api/carrier/${last + 1}/snapshot`)).status).toBe(404);
  });

  it('GET /api/carrier/{dot} gives the census row with the risk columns exactly as the SQL join of carriers and carrier_risk', async () => {
    const reader = svc.deps.readers.fmcsa;
    for (const dot of [SAMPLE_DOT_BASE, SAMPLE_DOT_BASE + 777, SAMPLE_DOT_BASE + CARRIERS - 1]) {
      const [joined] = await reader.query(await readFile(new URL('../../service/carriers/get-carrier.sql', import.meta.url), 'utf8'), {
        dot,
      });
      const res = await getJson(svc.app, `/api/carrier/${dot}`);
      expect(res.status).toBe(200);
      const { authority: _a, insurance: _i, usage_meta: _u, ...body } = res.body;
      expect(JSON.stringify(body)).toBe(JSON.stringify(joined));
    }
    expect((await getJson(svc.app, `/api/carrier/${SAMPLE_DOT_BASE + CARRIERS}`)).status).toBe(404);
  });

  it('reads the parquet-only tables through views (carriers, crashes, inspections, carrier_risk are not in serving.duckdb)', async () => {
    const m = svc.deps.readers.fmcsa.manifest!;
    for (const t of ['carriers', 'crashes', 'inspections', 'inspection_units', 'violations', 'carrier_risk'])
      expect(m.tables[t].storage).toBe('parquet');
    expect(m.tables.sms_basics.storage).toBeUndefined();
    // carrier_risk has the score query's columns, not the DDL placeholder's.
    expect((await svc.deps.readers.fmcsa.query('SELECT count(*)::INTEGER AS n FROM carrier_snapshot_columns'))[0].n).toBeGreaterThan(70);
    const [{ n }] = await svc.deps.readers.fmcsa.query(
      'SELECT count(*)::INTEGER AS n FROM carriers c JOIN carrier_risk r USING (dot_number)',
    );
    expect(n).toBe(CARRIERS);
  });

  it('answers safety, crashes (by dot and vin), inspections and enforcement', async () => {
    const [{ dot_number: dot }] = await svc.deps.readers.fmcsa.query(
      `SELECT dot_number FROM carrier_risk WHERE crashes_24m > 0 AND inspections_24m > 2 ORDER BY dot_number LIMIT 1`,
    );
    const safety = await getJson(svc.app, `/api/safety?dot=${dot}`);
    expect(safety.body.basics).toHaveLength(7);
    const crashes = await getJson(svc.app, `/api/crashes?dot=${dot}`);
    expect(crashes.body.total_crashes).toBeGreaterThan(0);
    const vin = crashes.body.vehicles[0].vin;
    const byVin = await getJson(svc.app, `/api/crashes?vin=${vin}`);
    expect(byVin.body.vehicles.every((v: any) => v.vin === vin)).toBe(true);
    const insp = await getJson(svc.app, `/api/inspections?dot=${String(dot).padStart(8, '0')}`);
    expect(insp.body.rates.vehicle.national_average).toBe(20.72);
    expect(insp.body.inspections.length).toBeGreaterThan(0);
    const enf = await getJson(svc.app, `/api/enforcement?dot=${dot}`);
    expect(enf.body.oos_orders.data_available).toBe(true);
    expect(enf.body.enforcement_cases).toMatchObject({ data_available: false, records: [] });
    expect(enf.body.enforcement_cases.message).toMatch(/not a clean record/);
  });

  it('says sms_data_available: false for a carrier with no SMS row, true only with one', async () => {
    const fmcsa = svc.deps.readers.fmcsa!;
    const [without] = await fmcsa.query(
      'SELECT dot_number FROM carriers WHERE dot_number NOT IN (SELECT dot_number FROM sms_basics) ORDER BY dot_number LIMIT 1',
    );
    const [withSms] = await fmcsa.query('SELECT dot_number FROM sms_basics ORDER BY dot_number LIMIT 1');
    expect(without && withSms).toBeTruthy();
    const none = await getJson(svc.app, `/api/safety?dot=${without!.dot_number}`);
    expect(none.body).toMatchObject({ sms_data_available: false, sms_dataset_loaded: true, sms_counts: null, sms_segment: null });
    const some = await getJson(svc.app, `/api/safety?dot=${withSms!.dot_number}`);
    expect(some.body).toMatchObject({ sms_data_available: true, sms_dataset_loaded: true });
    expect(some.body.sms_counts).not.toBeNull();
  });

  it('answers 400 naming the parameter and 404 with the dot', async () => {
    expect(await getJson(svc.app, '/api/safety')).toMatchObject({ status: 400, body: { parameter: 'dot' } });
    expect(await getJson(svc.app, '/api/inspections?dot=12x')).toMatchObject({ status: 400, body: { parameter: 'dot' } });
    expect(await getJson(svc.app, '/api/crashes?vin=SHORT')).toMatchObject({ status: 400, body: { parameter: 'vin' } });
    const nf = await getJson(svc.app, '/api/carrier/99999999/snapshot');
    expect(nf).toMatchObject({ status: 404, body: { dot: 99999999 } });
    expect(nf.body.error).toMatch(/99999999/);
    expect(await getJson(svc.app, '/api/red-flags?code=NOPE')).toMatchObject({ status: 400, body: { parameter: 'code' } });
  });
});
