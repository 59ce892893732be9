/**
 * Incremental registry runs (issue 18, item 6) on the small deterministic sample: a second run over the same
 * inputs parses nothing and reuses every input; a run with one changed file parses exactly that file; a removed
 * input's rows disappear. Each incremental snapshot holds the same rows, and the same packed per-company records
 * (merged from the previous snapshot's, jobs/registry/registry-packed.ts), as a full run over the same inputs.
 */
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { cp, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { expectSameRows, publishedRows } from '../helpers/snapshot-rows.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { packOptions } from '../../jobs/registry/registry-packed.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { scanInputs } from '../../jobs/registry/scan-inputs.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { silentLogger } from '../../lib/log.ts';
import { readLedger } from '../../lib/warehouse/incremental.ts';
import { lastPublishShape } from '../../lib/warehouse/publish.ts';
import { openDatabase, queryRows } from '../../lib/warehouse/duckdb.ts';
import { readCurrentManifest, tableFilePaths } from '../../lib/warehouse/snapshot.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';

const EMPTY_INDEX = `Description:           Master Index of EDGAR Dissemination Feed by Form Type
Last Data Received:    March 29, 2025
Comments:              webmaster@sec.gov
Anonymous FTP:         ftp://ftp.sec.gov/edgar/




Form Type   Company Name                                                  CIK         Date Filed  File Name
${'-'.repeat(141)}
`;

describe('incremental registry runs', () => {
  let dir: string;
  let input: string;
  const run = (dataDir = `${dir}/data`) =>
    runPipelineInProcess(registryPipeline, {
      config: testConfig(dataDir),
      log: silentLogger,
      inputDir: input,
      force: true,
      backoffMs: 1,
      concurrency: 2,
    });
  /** A full run over the same inputs in a fresh warehouse: what the incremental snapshot must equal. */
  const fullRows = async (name: string) => {
    const d = `${dir}/${name}`;
    await run(d);
    return publishedRows(d, 'registry', { packed: true });
  };
  /** Every table's parquet (a directory table: all its files) holds the serving table's row count (delta exports). */
  const expectParquetMatchesServing = async () => {
    const data = `${dir}/data`;
    const manifest = (await readCurrentManifest(data, 'registry'))!;
    const snap = snapshotDir(data, 'registry', manifest.snapshot_id);
    const db = await openDatabase(':memory:');
    const conn = await db.connect();
    try {
      for (const [t, tm] of Object.entries(manifest.tables)) {
        const files = tableFilePaths(snap, t, tm).map((f) => `'${f}'`);
        const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM read_parquet([${files.join(', ')}])`);
        expect(n, `parquet rows of ${t}`).toBe(tm.rows);
      }
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  };
  const currentRows = () => publishedRows(`${dir}/data`, 'registry', { packed: true });
  /** The leaf store (publish.ts writeLeafStore; merged on a delta) holds exactly the snapshot's origin_leaves, each once. */
  const expectLeafStoreMatchesTable = async () => {
    const reader = await SnapshotReader.open(`${dir}/data`, 'registry', { poolSize: 1 });
    try {
      const rows = await reader.query(
        `SELECT leaf_hash, 'sha256' AS alg, 'rfc8785' AS canon, kind, source, source_url, retrieved_at, content_sha256, record_sha256, parent, table_name FROM origin_leaves ORDER BY leaf_hash`,
      );
      const store = reader.packed('origin_leaves')!;
      const stored: string[] = [];
      for (const k of store.allKeys()) for (const l of JSON.parse((await store.get(k))!)) stored.push(JSON.stringify(l));
      expect(stored.sort()).toEqual(rows.map((r) => JSON.stringify(r)).sort());
    } finally {
      await reader.close();
    }
  };
  let inputCount = 0;

  beforeAll(async () => {
    // The packed stores in batches of 37 companies, so full and delta writes both cross batch boundaries.
    packOptions.batch = 37;
    dir = await tempDir('proofline-registry-incremental-');
    const sample = `${dir}/sample`;
    await ensureSample(sample, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
    input = `${dir}/input`;
    await cp(sample, input, { recursive: true, preserveTimestamps: true });
    // A day's index with a header and no rows: a reject of the first run that later runs must keep.
    await mkdir(path.join(input, 'sec', 'index', 'edge'), { recursive: true });
    await writeFile(path.join(input, 'sec', 'index', 'edge', 'empty-day.idx'), EMPTY_INDEX);
    const first = await run();
    expect(first.failed_children).toBe(0);
    const manifest = (await readCurrentManifest(`${dir}/data`, 'registry'))!;
    inputCount = (await readLedger(`${dir}/data`, 'registry', manifest))!.length;
  }, 300_000);
  afterAll(async () => {
    await removeDir(dir);
  });

  it('a first run parses every input and records them in the snapshot ledger', async () => {
    const manifest = (await readCurrentManifest(`${dir}/data`, 'registry'))!;
    expect(inputCount).toBeGreaterThan(100);
    expect(manifest.meta.incremental).toEqual({ parsed: inputCount, reused: 0, removed: 0 });
  });

  it('a run with nothing changed parses no file, reuses all, and publishes the same rows', async () => {
    const before = await currentRows();
    expect(before.rejects).toEqual([expect.stringContaining('index/edge/empty-day.idx')]);
    const report = await run();
    expect(report.children).toEqual([]);
    const manifest = (await readCurrentManifest(`${dir}/data`, 'registry'))!;
    expect(manifest.meta.incremental).toEqual({ parsed: 0, reused: inputCount, removed: 0 });
    // Delta publish: the previous serving database is reused and no table is written anew (all hard-linked).
    expect(lastPublishShape.mode).toBe('delta');
    expect(lastPublishShape.written).toEqual([]);
    expectSameRows(await currentRows(), before);
  }, 120_000);

  it('a run with one changed file parses exactly that file and equals a full run over the same inputs', async () => {
    const subs = await scanInputs(path.join(input, 'sec', 'submissions'), /^CIK\d{10}\.json$/);
    const file = subs[0]!;
    const json = JSON.parse(await readFile(file, 'utf8'));
    json.name = `${json.name} RENAMED`;
    await writeFile(file, JSON.stringify(json));
    const report = await run();
    expect(report.children.map((c) => c.step)).toEqual(['submissions']);
    const manifest = (await readCurrentManifest(`${dir}/data`, 'registry'))!;
    expect(manifest.meta.incremental).toEqual({ parsed: 1, reused: inputCount - 1, removed: 0 });
    const rows = await currentRows();
    expect(rows.companies.filter((r) => r.includes(' RENAMED'))).toHaveLength(1);
    // Only what the change touched is written: the ticker files' rows are hard-linked from the previous snapshot.
    expect(lastPublishShape.mode).toBe('delta');
    expect(lastPublishShape.written).toContain('companies');
    expect(lastPublishShape.linked).toContain('ticker_snapshots');
    expectSameRows(rows, await fullRows('full-changed'));
    await expectParquetMatchesServing();
    await expectLeafStoreMatchesTable();
  }, 240_000);

  it('a run with a changed ticker file re-derives every company and equals a full run', async () => {
    const tickers = await scanInputs(path.join(input, 'sec', 'tickers'), /^company_tickers_exchange\.json$/);
    const file = tickers[0]!;
    const json = JSON.parse(await readFile(file, 'utf8'));
    // The first company's ticker leaves the current file: its status and lookup rows change.
    json.data = json.data.slice(1);
    await writeFile(file, JSON.stringify(json));
    // The growth limit (a database changed in place past 1.5x its whole-build size is written whole) is the next case's
    // subject: after the nights above a small database may be near it, so its whole-build size is pinned to today's.
    const data = `${dir}/data`;
    const snap = snapshotDir(data, 'registry', (await readCurrentManifest(data, 'registry'))!.snapshot_id);
    await writeFile(
      path.join(snap, 'serving-base.json'),
      JSON.stringify({ full_bytes: (await stat(path.join(snap, 'serving.duckdb'))).size }),
    );
    const report = await run();
    expect(report.children.map((c) => c.step)).toEqual(['tickers']);
    expect(lastPublishShape.mode).toBe('delta');
    expect(lastPublishShape.written).toContain('company_lookup');
    expectSameRows(await currentRows(), await fullRows('full-tickers'));
    await expectParquetMatchesServing();
  }, 240_000);

  it('a serving database grown past its limit is written whole again, and the next night is a delta again', async () => {
    const data = `${dir}/data`;
    const manifest = (await readCurrentManifest(data, 'registry'))!;
    const before = await currentRows();
    // As if the database had been changed in place for months: its whole-build size recorded as a tenth of today's.
    const snap = snapshotDir(data, 'registry', manifest.snapshot_id);
    const { size } = await stat(path.join(snap, 'serving.duckdb'));
    await writeFile(path.join(snap, 'serving-base.json'), JSON.stringify({ full_bytes: Math.floor(size / 10) }));
    await run();
    expect(lastPublishShape.mode).toBe('full');
    expectSameRows(await currentRows(), before);
    await run();
    expect(lastPublishShape.mode).toBe('delta');
  }, 240_000);

  it("a removed input's rows disappear", async () => {
    const docs = await scanInputs(path.join(input, 'sec', 'filings'));
    const doc = docs[0]!;
    const accession = path.basename(path.dirname(doc));
    const before = await currentRows();
    expect(before.documents.some((r) => r.includes(accession))).toBe(true);
    await rm(doc);
    await rm(`${doc}.meta.json`, { force: true });
    await run();
    const manifest = (await readCurrentManifest(`${dir}/data`, 'registry'))!;
    expect(manifest.meta.incremental).toEqual({ parsed: 0, reused: inputCount - 1, removed: 1 });
    const rows = await currentRows();
    expect(rows.documents.length).toBe(before.documents.length - 1);
    expectSameRows(rows, await fullRows('full-removed'));
  }, 240_000);
});
