/**
 * Incremental FMCSA runs (issue 18, item 6) on the small sample: a night with nothing changed is skipped (nothing
 * published) and, forced, parses nothing; a changed, a removed and an added file are the only files parsed (the
 * others' parts are linked from the previous snapshot), and every published table, the derived carrier tables
 * and packed stores included, equals a full run over the same files (the packed census store and the carrier name
 * index are linked while the census files are unchanged and the previous snapshot derived them the same way,
 * derived again when one changed or the way differs; the crash and inspection stores likewise with their files).
 * A reused file's rejected rows stay reported;
 * a file whose header changed is rejected by name, as in a full run.
 */
import { appendFile, cp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fmcsaPipeline, lastDeriveTimings } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { silentLogger } from '../../lib/log.ts';
import { readLedger } from '../../lib/warehouse/incremental.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { listSnapshots, readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { expectSameRows, publishedRows } from '../helpers/snapshot-rows.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const CARRIERS = 400;
/** The packed stores publish writes beside the tables (served by DOT without DuckDB). */
const PACKED = [
  'carrier_snapshot',
  'carrier_census',
  'crash_by_dot',
  'crash_by_vin',
  'inspection_by_dot',
  'carrier_filings',
  'carrier_records',
];

describe('incremental FMCSA runs', () => {
  let dir: string;
  let input: string;
  let files = 0;
  const data = () => `${dir}/data`;
  const run = (dataDir = data(), force = true) =>
    runPipelineInProcess(fmcsaPipeline, { config: testConfig(dataDir), log: silentLogger, inputDir: input, force, backoffMs: 1 });
  /** Every table, plus the packed stores' lines, of the current snapshot. */
  const snapshotRows = async (dataDir: string) => {
    const rows = await publishedRows(dataDir, 'fmcsa');
    const manifest = (await readCurrentManifest(dataDir, 'fmcsa'))!;
    for (const p of PACKED) {
      expect(manifest.packed?.[p], `packed store ${p}`).toBeDefined();
      const tsv = await readFile(path.join(snapshotDir(dataDir, 'fmcsa', manifest.snapshot_id), 'packed', `${p}.tsv`), 'utf8');
      rows[`packed:${p}`] = tsv.split('\n').filter(Boolean).sort();
    }
    return rows;
  };
  /** A full run over the same files in a fresh warehouse: what the incremental snapshot must equal. */
  const fullRun = async (name: string) => {
    const d = `${dir}/${name}`;
    const report = await run(d);
    expect(report.incremental).toEqual({ parsed: files, reused: 0, removed: 0 });
    return snapshotRows(d);
  };
  const oos = () => path.join(input, 'fmcsa', 'oos', 'OUT_OF_SERVICE_ORDERS.csv');

  beforeAll(async () => {
    dir = await tempDir('proofline-fmcsa-incremental-');
    // The first (full) run: the sample generated under dir/input and published into dir/data.
    await ingestSmallFmcsa(dir, data(), {}, CARRIERS);
    input = `${dir}/input`;
    const manifest = (await readCurrentManifest(data(), 'fmcsa'))!;
    files = (await readLedger(data(), 'fmcsa', manifest))!.length;
    expect(files).toBeGreaterThan(8);
    expect(manifest.meta.incremental).toEqual({ parsed: files, reused: 0, removed: 0 });
    // A row whose DOT number is not a number: a reject that later runs (reusing the file) must keep reporting.
    await appendFile(oos(), 'NOT-A-DOT,BAD KEY LLC,,2024-01-02,Imminent hazard,ACTIVE,\n');
    const second = await run();
    expect(second.failed_children).toBe(0);
    expect(second.children.map((c) => c.key)).toEqual(['oos/OUT_OF_SERVICE_ORDERS.csv']);
    expect(second.incremental).toEqual({ parsed: 1, reused: files - 1, removed: 0 });
    // Every input names the parts holding its rows (kept by the snapshot for the next run to link).
    const ledger = (await readLedger(data(), 'fmcsa', await readCurrentManifest(data(), 'fmcsa')))!;
    for (const e of ledger) {
      expect(e.parts?.length, e.path).toBeGreaterThan(0);
      // The SHA-256 of the bytes on disk (new files are hashed by their child, not at plan).
      expect(e.sha256, e.path).toBe(sha256Hex(await readFile(path.join(input, e.path))));
    }
  }, 240_000);
  afterAll(async () => {
    await removeDir(dir);
  });

  it('a night with nothing changed publishes nothing; forced, it parses no file and publishes the same rows', async () => {
    const before = await snapshotRows(data());
    expect(before.rejects).toEqual([expect.stringContaining('OUT_OF_SERVICE_ORDERS.csv')]);
    const snapshots = await listSnapshots(data(), 'fmcsa');
    const skipped = await run(data(), false);
    expect(skipped.skipped).toBe(true);
    expect(await listSnapshots(data(), 'fmcsa')).toEqual(snapshots);
    const forced = await run();
    expect(forced.children).toEqual([]);
    expect(forced.incremental).toEqual({ parsed: 0, reused: files, removed: 0 });
    expectSameRows(await snapshotRows(data()), before);
  }, 120_000);

  it('a changed crash file is the only file parsed, and every table equals a full run', async () => {
    const crash = path.join(input, 'fmcsa', 'crash', 'Crash_File.csv');
    const lines = (await readFile(crash, 'utf8')).split('\n');
    // Drop a fifth of the crashes: risk features, scores, red flags and dataset_status all move.
    await writeFile(crash, lines.filter((_l, i) => i === 0 || i % 5 !== 0).join('\n'));
    const before = await snapshotRows(data());
    const report = await run();
    expect(report.children.map((c) => c.key)).toEqual(['crash/Crash_File.csv']);
    expect(report.incremental).toEqual({ parsed: 1, reused: files - 1, removed: 0 });
    const rows = await snapshotRows(data());
    expect(rows.crashes.length).toBeLessThan(before.crashes.length);
    expect(rows.carrier_risk).toHaveLength(CARRIERS);
    expect(rows.carrier_risk).not.toEqual(before.carrier_risk);
    // The census files were reused: the packed census store and the name index are linked from the previous
    // snapshot, not derived again.
    expect(lastDeriveTimings.census_packed_linked).toBe(1);
    expect(lastDeriveTimings.name_index_linked).toBe(1);
    expect(lastDeriveTimings.docket_packed_linked).toBe(1);
    // The crash stores are written again from the new crash part; the inspection store is linked (its files were reused).
    expect(lastDeriveTimings.crash_packed_linked).toBeUndefined();
    expect(lastDeriveTimings.crash_packed).toBeGreaterThanOrEqual(0);
    expect(lastDeriveTimings.inspection_packed_linked).toBe(1);
    expect(lastDeriveTimings.filings_packed_linked).toBe(1);
    expect(lastDeriveTimings.records_packed_linked).toBe(1);
    expect(rows['packed:crash_by_dot']).not.toEqual(before['packed:crash_by_dot']);
    // The reused OOS file's rejected row is still reported.
    expect(rows.rejects).toEqual([expect.stringContaining('OUT_OF_SERVICE_ORDERS.csv')]);
    expectSameRows(rows, await fullRun('full-changed'));
  }, 240_000);

  it('a previous snapshot that derived the census store, the name index or the docket store another way has them derived again', async () => {
    const manifest = (await readCurrentManifest(data(), 'fmcsa'))!;
    const stampFile = path.join(snapshotDir(data(), 'fmcsa', manifest.snapshot_id), 'derived-from.json');
    const stamps = JSON.parse(await readFile(stampFile, 'utf8')) as Record<string, string>;
    expect(Object.keys(stamps).sort()).toEqual(['carrier_by_docket', 'carrier_census', 'carrier_name_index']);
    const before = await snapshotRows(data());
    await writeFile(
      stampFile,
      JSON.stringify({ ...stamps, carrier_census: 'older', carrier_name_index: 'older', carrier_by_docket: 'older' }),
    );
    const report = await run();
    expect(report.children).toEqual([]);
    expect(lastDeriveTimings.census_packed_linked).toBeUndefined();
    expect(lastDeriveTimings.name_index_linked).toBeUndefined();
    expect(lastDeriveTimings.docket_packed_linked).toBeUndefined();
    expect(lastDeriveTimings.name_index).toBeGreaterThanOrEqual(0);
    expectSameRows(await snapshotRows(data()), before);
  }, 120_000);

  it('a changed census file rewrites the packed census store, and every table equals a full run', async () => {
    const census = path.join(input, 'fmcsa', 'census', 'Company_Census_File.csv');
    const lines = (await readFile(census, 'utf8')).split('\n');
    await writeFile(census, lines.filter((_l, i) => i !== 7).join('\n'));
    const report = await run();
    expect(report.children.map((c) => c.key)).toEqual(['census/Company_Census_File.csv']);
    expect(lastDeriveTimings.census_packed_linked).toBeUndefined();
    expect(lastDeriveTimings.docket_packed_linked).toBeUndefined();
    expect(lastDeriveTimings.crash_packed_linked).toBe(1);
    expect(lastDeriveTimings.inspection_packed_linked).toBe(1);
    expect(lastDeriveTimings.filings_packed_linked).toBeUndefined();
    const rows = await snapshotRows(data());
    expect(rows['packed:carrier_census']).toHaveLength(CARRIERS - 1);
    expectSameRows(rows, await fullRun('full-census'));
  }, 240_000);

  it("a removed file's rows disappear, and every table equals a full run", async () => {
    const revocation = path.join(input, 'fmcsa', 'licensing', 'revocation_2026_11_20.txt');
    await rename(revocation, `${dir}/revocation.txt`);
    const report = await run();
    expect(report.children).toEqual([]);
    expect(report.incremental).toEqual({ parsed: 0, reused: files - 1, removed: 1 });
    const rows = await snapshotRows(data());
    expect(rows.revocations).toEqual([]);
    // The revocations are gone: the records store is written again, the crash store linked.
    expect(lastDeriveTimings.records_packed_linked).toBeUndefined();
    expect(lastDeriveTimings.crash_packed_linked).toBe(1);
    files -= 1;
    expectSameRows(rows, await fullRun('full-removed'));
  }, 240_000);

  it('an added file is the only file parsed, and every table equals a full run', async () => {
    await cp(`${dir}/revocation.txt`, path.join(input, 'fmcsa', 'licensing', 'revocation_2026_11_24.txt'));
    const report = await run();
    expect(report.children.map((c) => c.key)).toEqual(['licensing/revocation_2026_11_24.txt']);
    expect(report.incremental).toEqual({ parsed: 1, reused: files, removed: 0 });
    files += 1;
    const rows = await snapshotRows(data());
    expect(rows.revocations.length).toBeGreaterThan(0);
    expectSameRows(rows, await fullRun('full-added'));
  }, 240_000);

  it('a reused file whose parts are gone from the snapshot is parsed again, and the rows stay the same', async () => {
    const manifest = (await readCurrentManifest(data(), 'fmcsa'))!;
    const entry = (await readLedger(data(), 'fmcsa', manifest))!.find((e) => e.path.endsWith('Vehicle_Inspection_File.csv'))!;
    const before = await snapshotRows(data());
    await rm(path.join(snapshotDir(data(), 'fmcsa', manifest.snapshot_id), 'parts', ...entry.parts![0]!.split('/')));
    const report = await run();
    expect(report.children.map((c) => c.key)).toEqual(['inspection/Vehicle_Inspection_File.csv']);
    expect(report.incremental).toEqual({ parsed: 1, reused: files - 1, removed: 0 });
    expectSameRows(await snapshotRows(data()), before);
  }, 240_000);

  it('a file whose header changed is rejected by name, its rows dropped as in a full run; fixed, it is parsed again', async () => {
    const text = await readFile(oos(), 'utf8');
    await writeFile(oos(), text.replace(/^DOT_NUMBER/, 'USDOT_NO'));
    const report = await run();
    expect(report.children).toEqual([]);
    expect(report.plan_rejects).toEqual([{ file: 'oos/OUT_OF_SERVICE_ORDERS.csv', reason: expect.stringMatching(/unrecognised header/) }]);
    expect(report.incremental).toEqual({ parsed: 0, reused: files - 1, removed: 1 });
    const rows = await snapshotRows(data());
    expect(rows.oos_orders).toEqual([]);
    expect(rows.rejects).toEqual([expect.stringMatching(/oos\/OUT_OF_SERVICE_ORDERS\.csv.*unrecognised header/)]);
    expectSameRows(rows, await fullRunExcept('full-bad-header', 1));
    await writeFile(oos(), text);
    const fixed = await run();
    expect(fixed.children.map((c) => c.key)).toEqual(['oos/OUT_OF_SERVICE_ORDERS.csv']);
    expect(fixed.incremental).toEqual({ parsed: 1, reused: files - 1, removed: 0 });
  }, 240_000);

  /** A full run where `unreadable` of the files are rejected while planning (so not parsed). */
  const fullRunExcept = async (name: string, unreadable: number) => {
    const d = `${dir}/${name}`;
    const report = await run(d);
    expect(report.incremental).toEqual({ parsed: files - unreadable, reused: 0, removed: 0 });
    return snapshotRows(d);
  };
});
