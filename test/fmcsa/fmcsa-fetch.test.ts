/**
 * The FMCSA fetch step against the replay server: the portal's CSV export (by dataset id) and an L&I file are
 * streamed to disk with their SHA-256 and ETag and ingested; the next run asks with If-None-Match, gets 304 and
 * publishes nothing; an export whose header changed and a truncated SMS zip are rejected with their URL and
 * position, the run publishes nothing, the published snapshot and the good file on disk stay as they were.
 * Incremental (issue 18, item 6): a night where one dataset changed at the source parses only that one (the 304'd
 * one's parts are linked from the previous snapshot) and equals a full run over the same files.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import type { RunReport } from '../../jobs/processors.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { portalExportPath } from '../../jobs/fmcsa/fmcsa-fetch.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { listSnapshots, readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { expectSameRows, publishedRows } from '../helpers/snapshot-rows.ts';
import { FIXTURES, fixture, HAS_SHARED } from '../helpers/shared.ts';

describe.skipIf(!HAS_SHARED)('FMCSA downloads (in process, replay server)', { timeout: 240_000 }, () => {
  let replay: ReplayServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    replay = await startReplayServer(FIXTURES);
  });
  afterAll(async () => {
    await replay.close();
    for (const d of dirs) await removeDir(d);
  });

  it('downloads with SHA-256 and ETag, skips an unchanged night with a conditional GET, and rejects a changed header or a truncated zip without touching the snapshot', async () => {
    const dataDir = await tempDir('proofline-fmcsa-fetch-');
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const revocationUrl = `${replay.baseUrl}/fmcsa-files/licensing/revocation_2024_08_06.txt`;
    const config = (extra: Record<string, string> = {}) =>
      testConfig(dataDir, {
        FMCSA_DATASETS: 'kjg3-diqy',
        FMCSA_DOWNLOAD_URLS: revocationUrl,
        FMCSA_PORTAL_BASE_URL: replay.baseUrl,
        FMCSA_DOWNLOAD_IDLE_MS: '2000',
        ...extra,
      });
    const run = (cfg = config()) =>
      runPipelineInProcess(fmcsaPipeline, { config: cfg, log: silentLogger, inputDir, backoffMs: 1, attempts: 2 });

    // Night 1: both downloaded, streamed, hashed, ingested.
    let from = replay.hits.length;
    const r1 = await run();
    expect(r1.failed_children).toBe(0);
    const census = path.join(inputDir, 'fmcsa', 'portal', 'kjg3-diqy.csv');
    const bytes = await readFile(census);
    expect(bytes.equals(await readFile(fixture('fmcsa/census/sms_input_census_kjg3-diqy_sample1000.csv')))).toBe(true);
    const meta = JSON.parse(await readFile(`${census}.meta.json`, 'utf8'));
    expect(meta).toMatchObject({
      source_url: `${replay.baseUrl}${portalExportPath('kjg3-diqy')}`,
      sha256: sha256Hex(bytes),
      bytes: bytes.length,
      etag: expect.stringMatching(/^"/),
    });
    expect(
      replay.hits
        .slice(from)
        .map((h) => `${h.status} ${h.path}`)
        .sort(),
    ).toEqual(['200 /api/views/kjg3-diqy/rows.csv', '200 /fmcsa-files/licensing/revocation_2024_08_06.txt']);
    const reader = await SnapshotReader.open(dataDir, 'fmcsa', { poolSize: 1 });
    try {
      expect((await reader.query(`SELECT count(*)::INTEGER AS n FROM carriers`))[0]!.n).toBe(1000);
      expect((await reader.query(`SELECT count(*)::INTEGER AS n FROM revocations`))[0]!.n).toBeGreaterThan(2000);
    } finally {
      await reader.close();
    }
    const published = (await readCurrentManifest(dataDir, 'fmcsa'))!.snapshot_id;

    // Night 2: nothing changed at the source: two conditional GETs answered 304, nothing downloaded or published.
    from = replay.hits.length;
    const r2 = await run();
    expect(r2.skipped).toBe(true);
    expect(replay.hits.slice(from).map((h) => h.status)).toEqual([304, 304]);

    // Night 3: the export's header changed (a renamed column): rejected with its URL and line, the run fails
    // (a fetched dataset is required), the snapshot and the good file on disk are untouched.
    const changed = bytes.toString('utf8').replace(/^dot_number/, 'usdot_no');
    replay.override(portalExportPath('kjg3-diqy').split('?')[0]!, changed);
    await expect(run()).rejects.toThrow(/unrecognised header.*line 1/);
    replay.restore(portalExportPath('kjg3-diqy').split('?')[0]!);
    expect((await readCurrentManifest(dataDir, 'fmcsa'))!.snapshot_id).toBe(published);
    expect((await readFile(census)).equals(bytes)).toBe(true);

    // Night 4: the SMS zip arrives cut short: rejected (no end of central directory), nothing published.
    const zipPath = '/fmcsa-files/sms/SMS_C_PassProperty_2016Sep.zip';
    replay.fault(zipPath, { times: 5, mode: 'truncate' });
    await expect(run(config({ FMCSA_DOWNLOAD_URLS: `${revocationUrl},${replay.baseUrl}${zipPath}` }))).rejects.toThrow(
      /truncated zip.*position/,
    );
    expect((await readCurrentManifest(dataDir, 'fmcsa'))!.snapshot_id).toBe(published);
    expect(await listSnapshots(dataDir, 'fmcsa')).toEqual([published]);
  });

  it('a night where one dataset changed at the source parses only it (the other answered 304 and its parts are reused), equals a full run, and a night of 304s parses and publishes nothing', async () => {
    const dataDir = await tempDir('proofline-fmcsa-fetch-incremental-');
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const revocationPath = '/fmcsa-files/licensing/revocation_2024_08_06.txt';
    const config = (dir = dataDir, fetch = true) =>
      testConfig(dir, {
        ...(fetch ? { FMCSA_DATASETS: 'kjg3-diqy', FMCSA_DOWNLOAD_URLS: `${replay.baseUrl}${revocationPath}` } : {}),
        FMCSA_PORTAL_BASE_URL: replay.baseUrl,
        FMCSA_DOWNLOAD_IDLE_MS: '2000',
      });
    const run = (cfg = config()) =>
      runPipelineInProcess(fmcsaPipeline, { config: cfg, log: silentLogger, inputDir, backoffMs: 1, attempts: 2 });
    const parsedFiles = (r: RunReport) =>
      r.children
        .filter((c) => c.step === 'file')
        .map((c) => c.key)
        .sort();

    // Night 1: both datasets downloaded and parsed.
    const r1 = await run();
    expect(parsedFiles(r1)).toEqual(['downloads/revocation_2024_08_06.txt', 'portal/kjg3-diqy.csv']);
    expect(r1.incremental).toEqual({ parsed: 2, reused: 0, removed: 0 });

    // Night 2: the L&I file changed at the source (a new ETag): downloaded and parsed; the census export answers
    // 304 and is not parsed again (its parts are linked from the previous snapshot).
    const recorded = await readFile(fixture('fmcsa/licensing/revocation_2024_08_06.txt'), 'utf8');
    const lines = recorded.split('\n');
    replay.override(revocationPath, lines.filter((_l, i) => i === 0 || i % 4 !== 0).join('\n'));
    let from = replay.hits.length;
    const r2 = await run();
    expect(
      replay.hits
        .slice(from)
        .map((h) => `${h.status} ${h.path}`)
        .sort(),
    ).toEqual(
      [
        '200 /fmcsa-files/licensing/revocation_2024_08_06.txt',
        '200 /fmcsa-files/licensing/revocation_2024_08_06.txt',
        '304 /api/views/kjg3-diqy/rows.csv',
      ].sort(),
    );
    expect(parsedFiles(r2)).toEqual(['downloads/revocation_2024_08_06.txt']);
    expect(r2.incremental).toEqual({ parsed: 1, reused: 1, removed: 0 });
    const rows = await publishedRows(dataDir, 'fmcsa');
    expect(rows.carriers).toHaveLength(1000);
    // The same files, parsed whole by a run that fetches nothing, in a fresh warehouse.
    const full = path.join(dataDir, 'full');
    const rf = await run(config(full, false));
    expect(rf.incremental).toEqual({ parsed: 2, reused: 0, removed: 0 });
    expectSameRows(rows, await publishedRows(full, 'fmcsa'));
    const published = (await readCurrentManifest(dataDir, 'fmcsa'))!.snapshot_id;

    // Night 3: 304 for every dataset: nothing downloaded, parsed or published.
    const snapshots = await listSnapshots(dataDir, 'fmcsa');
    from = replay.hits.length;
    const r3 = await run();
    expect(r3.skipped).toBe(true);
    expect(r3.children).toEqual([]);
    expect(replay.hits.slice(from).map((h) => h.status)).toEqual([304, 304]);
    expect(await listSnapshots(dataDir, 'fmcsa')).toEqual(snapshots);
    expect((await readCurrentManifest(dataDir, 'fmcsa'))!.snapshot_id).toBe(published);

    // Night 4: the census export's header changed: rejected, the run fails, the snapshot stays.
    const census = await readFile(fixture('fmcsa/census/sms_input_census_kjg3-diqy_sample1000.csv'), 'utf8');
    replay.override(portalExportPath('kjg3-diqy').split('?')[0]!, census.replace(/^dot_number/, 'usdot_no'));
    try {
      await expect(run()).rejects.toThrow(/unrecognised header.*line 1/);
    } finally {
      replay.restore(portalExportPath('kjg3-diqy').split('?')[0]!);
      replay.restore(revocationPath);
    }
    expect((await readCurrentManifest(dataDir, 'fmcsa'))!.snapshot_id).toBe(published);
    expectSameRows(await publishedRows(dataDir, 'fmcsa'), rows);
  });
});
