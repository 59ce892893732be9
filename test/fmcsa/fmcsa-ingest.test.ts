import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { detectFormat } from '../../ingest/fmcsa/formats.ts';
import { assessCarrier } from '../../ingest/fmcsa/risk-model.ts';
import { CarrierFeaturesSchema } from '../../ingest/fmcsa/risk-model.ts';
import { featuresFromRow, getEnforcement, getRiskSnapshot, getCarrierSafety } from '../../service/carriers/carriers.queries.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

describe.skipIf(!HAS_SHARED)('detectFormat', () => {
  it('recognises every bulk-file header template Proofline reads', async () => {
    const dir = fixture('fmcsa/dictionaries/headers');
    const found: Record<string, string | null> = {};
    for (const f of (await readdir(dir)).sort()) found[f] = detectFormat(await readFile(path.join(dir, f), 'utf8'))?.spec.kind ?? null;
    expect(found).toEqual({
      'Carrier_All_With_History_6eyk-hxee.header.csv': 'authority',
      'Company_Census_File_az4n-8mr2.header.csv': 'company_census',
      'Crash_File_aayw-vxb3.header.csv': 'crash',
      'Inspections_Per_Unit_wt8s-2hbx.header.csv': 'inspection_units',
      'Inspections_and_Citations_qbt8-7vic.header.csv': null,
      'Insur_All_With_History_ypjt-5ydn.header.csv': 'insurance',
      'OUT_OF_SERVICE_ORDERS_p2mt-9ige.header.csv': 'oos_orders',
      'Revocation_All_With_History_sa6p-acbp.header.csv': 'revocation',
      'SMS_AB_PassProperty_4y6x-dmck.header.csv': 'sms_property',
      'SMS_AB_Pass_m3ry-qcip.header.csv': 'sms_passenger',
      'SMS_Input_Crash.header.csv': null,
      'SMS_Input_Inspection.header.csv': null,
      'SMS_Input_Violation.header.csv': null,
      'Vehicle_Inspection_File_fx4q-ay7w.header.csv': 'inspection',
      'Vehicle_Inspections_and_Violations_876r-jsdb.header.csv': 'violations',
    });
  });

  it('reads the re-serialised SMS census (lower-case, FAX last) and the original upper-case header alike', async () => {
    const lower = (await readFile(fixture('fmcsa/census/sms_input_census_kjg3-diqy_sample1000.csv'), 'utf8')).split('\n')[0];
    const upper = await readFile(fixture('fmcsa/dictionaries/census_header_row_sms_input.txt'), 'utf8');
    expect(detectFormat(lower)?.spec.kind).toBe('sms_census');
    expect(detectFormat(lower)?.columns.at(-1)).toBe('FAX');
    expect(detectFormat(upper)?.spec.kind).toBe('sms_census');
  });
});

describe.skipIf(!HAS_SHARED)('fmcsa pipeline on the real fixtures', () => {
  let dataDir: string;
  let inputDir: string;
  let reader: SnapshotReader;
  let report: Awaited<ReturnType<typeof runPipelineInProcess>>;

  beforeAll(async () => {
    dataDir = await tempDir('fmcsa-real-');
    inputDir = await tempDir('fmcsa-real-in-');
    const files: Array<[string, string]> = [
      ['census/sms_input_census_kjg3-diqy_sample1000.csv', 'census'],
      ['census/sms_input_census_kjg3-diqy_sample500.csv', 'census'],
      ['sms/SMS_C_PassProperty_2016Sep.zip', 'sms'],
      ['sms/SMS_C_PassProperty_2016Sep.joinable_subset.txt', 'sms'],
      ['licensing/revocation_2024_08_06.txt', 'licensing'],
    ];
    for (const [f, sub] of files) {
      await mkdir(path.join(inputDir, 'fmcsa', sub), { recursive: true });
      await copyFile(fixture(`fmcsa/${f}`), path.join(inputDir, 'fmcsa', sub, path.basename(f)));
    }
    const config = testConfig(dataDir);
    report = await runPipelineInProcess(fmcsaPipeline, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
    reader = await SnapshotReader.open(dataDir, 'fmcsa', { poolSize: 2 });
  }, 120_000);
  afterAll(async () => {
    await reader?.close();
    await removeDir(dataDir);
    await removeDir(inputDir);
  });

  it('ingests every real file with row and reject counts', () => {
    expect(report.failed_children).toBe(0);
    const byKey = Object.fromEntries(report.children.map((c) => [c.key, { status: c.status, rows: c.rows, rejects: c.rejects }]));
    expect(byKey).toEqual({
      'census/sms_input_census_kjg3-diqy_sample1000.csv': { status: 'completed', rows: 1000, rejects: 0 },
      'census/sms_input_census_kjg3-diqy_sample500.csv': { status: 'completed', rows: 500, rejects: 0 },
      'licensing/revocation_2024_08_06.txt': { status: 'completed', rows: 2244, rejects: 0 },
      'sms/SMS_C_PassProperty_2016Sep.joinable_subset.txt': { status: 'completed', rows: 17591, rejects: 0 },
      'sms/SMS_C_PassProperty_2016Sep.zip': { status: 'completed', rows: 917920, rejects: 0 },
    });
  });

  it('keeps census DOT fields (golden: first row of the 1,000 sample)', async () => {
    const [row] = await reader.query(`SELECT * EXCLUDE (content_sha256) FROM carriers WHERE dot_number = $dot`, { dot: 2769350 });
    expect(row).toMatchObject({
      dot_number: 2769350,
      legal_name: 'FREDY O GARCIA GONZALEZ',
      mcs150_date: '2019-10-01',
      add_date: '2015-07-01',
      phone: '(310) 617-5164',
      email_address: 'frany25garcia@gmail.com',
      hm_flag: false,
      power_units: 1,
    });
    await expect(JSON.stringify(row, null, 2)).toMatchFileSnapshot('../golden/fmcsa/census-2769350.json');
  });

  it('reads SMS measures for a DOT that joins the census sample (golden)', async () => {
    const [joined] = await reader.query(
      `SELECT s.* EXCLUDE (source_file) FROM sms_basics s JOIN carriers c USING (dot_number) WHERE s.insp_total > 0 AND s.source_file LIKE '%.zip!%' ORDER BY s.insp_total DESC, s.dot_number LIMIT 1`,
    );
    expect(Number(joined.insp_total)).toBeGreaterThan(0);
    expect(joined.unsafe_driv_pct).toBeNull(); // property carriers: no public percentiles
    await expect(JSON.stringify(joined, null, 2)).toMatchFileSnapshot('../golden/fmcsa/sms-joined-census.json');
    const snap = await getRiskSnapshot(reader, String(joined.dot_number));
    expect(snap.features.inspections_24m).toBe(Number(joined.insp_total));
    // The features read back from the published row have exactly the shape of the one schema (no field missing, none extra).
    expect(CarrierFeaturesSchema.strict().parse(snap.features)).toEqual(snap.features);
    expect(snap.inputs.map((i) => i.dataset).sort()).toEqual([
      'fmcsa/li-revocation',
      'fmcsa/sms-input-census',
      'fmcsa/sms-input-census',
      'fmcsa/sms-pass-property',
      'fmcsa/sms-pass-property',
    ]);
    await expect(JSON.stringify({ features: snap.features, assessment: snap.assessment }, null, 2)).toMatchFileSnapshot(
      '../golden/fmcsa/risk-snapshot-sms-joined.json',
    );
    const safety = await getCarrierSafety(reader, Number(joined.dot_number));
    expect(safety.basics.map((b) => b.basic)).toHaveLength(7);
    expect(safety.percentiles_public).toBe(false);
  });

  it('normalises L&I revocations: padded DOT, MM/DD/YYYY dates, involuntary flag (golden)', async () => {
    const rows = await reader.query(`SELECT * EXCLUDE (source_file) FROM revocations WHERE docket_number = 'MC368053'`);
    expect(rows[0]).toMatchObject({
      docket_number: 'MC368053',
      dot_number: 830331,
      authority_type: 'COMMON',
      serve_date: '2024-06-26',
      effective_date: '2024-07-26',
      involuntary: true,
    });
    await expect(JSON.stringify(rows, null, 2)).toMatchFileSnapshot('../golden/fmcsa/revocation-mc368053.json');
    const [{ n }] = await reader.query(`SELECT count(*)::INTEGER AS n FROM revocations WHERE involuntary`);
    expect(n).toBe(1916);
  });

  it('scores every carrier identically in SQL and in assessCarrier', async () => {
    const rows = await reader.query(`SELECT * FROM carrier_risk`);
    expect(rows).toHaveLength(1500);
    const mismatched = rows.filter((r) => {
      const a = assessCarrier(featuresFromRow(r));
      return (
        a.risk_score !== r.risk_score ||
        a.recommendation !== r.recommendation ||
        a.red_flags.map((f) => f.code).join() !== (r.red_flag_codes as string[]).join()
      );
    });
    expect(mismatched).toEqual([]);
  });

  it('says "no data yet" for enforcement and OOS orders when no file was loaded, never clean', async () => {
    const e = await getEnforcement(reader, 2769350);
    expect(e.oos_orders).toMatchObject({ data_available: false, records: [] });
    expect(e.oos_orders.message).toMatch(/no data yet|No .* data yet/i);
    expect(e.enforcement_cases.message).toMatch(/not a clean record/);
    expect(e.revocations.data_available).toBe(true);
  });
});
