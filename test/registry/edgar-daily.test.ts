/**
 * The EDGAR daily increment (EDGAR_DAILY_INDEX), in process, against the replay server: a night walks the daily
 * index since the cursor kept in the registry snapshot, downloads the complete submissions of the universe's
 * filings (plus submissions JSON and companyfacts), and the registry fills timelines and people from them; the
 * next night walks only the new days; a night with nothing new requests nothing but a conditional GET of the
 * ticker file and publishes nothing. Bad bytes (an HTML page as a daily index, a filing URL answering HTML with
 * 200) become rejects naming the URL and position, a cut-short body is fetched again, a removed filing (404) is
 * reported and never parsed.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { addDays, dailyIndexUrlPath, filingFile, missingMarker, readDailyCursor } from '../../jobs/registry/edgar-daily.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { silentLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { completeSubmissionProblem } from '../../ingest/edgar/sgml.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest } from '../../lib/warehouse/snapshot.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { FIXTURES, HAS_SHARED } from '../helpers/shared.ts';

const UA = 'Proofline Tests tests@proofline.example';
const NVDA = 1045810;
const EARNINGS_8K = '0001045810-26-000019'; // filed 2026-02-25, items 2.02 + 9.01
const SECOND_8K = '0001045810-26-000024'; // filed 2026-03-06

describe('completeSubmissionProblem', () => {
  it('accepts a whole complete submission and names a cut-short one and an HTML page', () => {
    expect(completeSubmissionProblem('<SEC-DOCUMENT>0001-26-1.txt : 2026\n<DOCUMENT>x</DOCUMENT>\n</SEC-DOCUMENT>\n')).toBeNull();
    expect(completeSubmissionProblem('<SEC-DOCUMENT>0001-26-1.txt : 2026\n<DOCUMENT>x')).toMatchObject({ kind: 'truncated', position: 46 });
    expect(completeSubmissionProblem('<!DOCTYPE html><html><body>maintenance</body></html>')).toMatchObject({
      kind: 'not-a-submission',
      position: 0,
    });
  });
  it('names the day, quarter and file of a daily index', () => {
    expect(dailyIndexUrlPath('2026-02-25')).toBe('/Archives/edgar/daily-index/2026/QTR1/master.20260225.idx');
    expect(dailyIndexUrlPath('2025-10-01')).toBe('/Archives/edgar/daily-index/2025/QTR4/master.20251001.idx');
    expect(addDays('2024-02-28', 2)).toBe('2024-03-01');
  });
});

describe.skipIf(!HAS_SHARED)('EDGAR daily increment (in process, replay server)', { timeout: 240_000 }, () => {
  let replay: ReplayServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    replay = await startReplayServer(FIXTURES);
  });
  afterEach(async () => {
    await closeSecLimiter();
  });
  afterAll(async () => {
    await replay.close();
    for (const d of dirs) await removeDir(d);
  });
  const setup = async (name: string) => {
    const dataDir = await tempDir(`proofline-daily-${name}-`);
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const config = (env: Record<string, string>) =>
      testConfig(dataDir, {
        SEC_USER_AGENT: UA,
        SEC_WWW_BASE_URL: replay.baseUrl,
        SEC_DATA_BASE_URL: replay.baseUrl,
        SEC_RATE_LIMIT: '10',
        // The replay server shares this process's event loop with the in-process pipeline: a long parse must not
        // time a request out (no fault here hangs), or the exact hit lists below would gain a retry.
        SEC_TIMEOUT_MS: '10000',
        EDGAR_DAILY_INDEX: '1',
        ...env,
      });
    return { dataDir, inputDir, config };
  };
  const night = async (cfg: ReturnType<Awaited<ReturnType<typeof setup>>['config']>, inputDir: string) => {
    const from = replay.hits.length;
    const report = await runPipelineInProcess(registryPipeline, { config: cfg, log: silentLogger, inputDir, backoffMs: 1 });
    return { report, hits: replay.hits.slice(from) };
  };

  it('fills timelines from the nights since the cursor, fetches only new days, and a night with nothing new publishes nothing', async () => {
    const { dataDir, inputDir, config } = await setup('nvda');
    // Night 1: 2026-02-23 .. 2026-02-26, universe = the current ticker file (NVIDIA is in it). 2026-02-26 has no
    // index yet (one of the last two days): the cursor stays on 2026-02-25 and the next night asks for it again.
    const n1 = await night(config({ EDGAR_DAILY_SINCE: '2026-02-23', EDGAR_DAILY_UNTIL: '2026-02-26' }), inputDir);
    expect(n1.report.skipped).toBe(false);
    expect(n1.report.failed_children).toBe(0);
    expect(await readDailyCursor(dataDir)).toBe('2026-02-25');
    const p1 = n1.hits.map((h) => h.path);
    expect(p1.filter((p) => p.includes('/daily-index/'))).toEqual(
      ['2026-02-23', '2026-02-24', '2026-02-25', '2026-02-26'].map(dailyIndexUrlPath),
    );
    expect(p1).toContain(`/Archives/edgar/data/${NVDA}/${EARNINGS_8K}.txt`);
    expect(p1).toContain('/submissions/CIK0001045810.json');
    // An 8-K brings no companyfacts (only a new 10-K/10-Q does).
    expect(p1.some((p) => p.startsWith('/api/xbrl/companyfacts/'))).toBe(false);
    expect(n1.hits.every((h) => h.userAgent === UA)).toBe(true);
    const file = filingFile(path.join(inputDir, 'sec'), NVDA, EARNINGS_8K);
    expect(JSON.parse(await readFile(`${file}.meta.json`, 'utf8'))).toMatchObject({
      source_url: `${replay.baseUrl}/Archives/edgar/data/${NVDA}/${EARNINGS_8K}.txt`,
      accession: EARNINGS_8K,
      form: '8-K',
    });

    let reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const events = await reader.query(
        `SELECT item, acceptance_et, json_extract_string(origin, '$.source_url') AS url FROM doc_events WHERE accession = $a ORDER BY item`,
        { a: EARNINGS_8K },
      );
      expect(events.map((e) => e.item)).toContain('2.02');
      // The SGML header's Eastern acceptance time, and the leaf names the URL it was fetched from.
      expect(events[0]!.acceptance_et).toBe('2026-02-25T16:31:25');
      expect(String(events[0]!.url)).toBe(`${replay.baseUrl}/Archives/edgar/data/${NVDA}/${EARNINGS_8K}.txt`);
      const idx = await reader.query(`SELECT count(*)::INTEGER AS n FROM index_entries WHERE accession = $a`, { a: EARNINGS_8K });
      expect(idx[0]!.n).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }

    // Night 2: until 2026-03-09; the second 8-K arrives cut short once (fetched again), days after the cursor only.
    replay.fault(`/Archives/edgar/data/${NVDA}/${SECOND_8K}.txt`, { times: 1, mode: 'truncate' });
    const n2 = await night(config({ EDGAR_DAILY_UNTIL: '2026-03-09' }), inputDir);
    expect(n2.report.failed_children).toBe(0);
    // 2026-03-06 has an index; 03-07 (a Saturday, more than two days back) is passed; 03-08 and 03-09 are pending.
    expect(await readDailyCursor(dataDir)).toBe('2026-03-07');
    const idx2 = n2.hits.filter((h) => h.path.includes('/daily-index/')).map((h) => h.path);
    expect(idx2[0]).toBe(dailyIndexUrlPath('2026-02-26'));
    expect(idx2).toHaveLength(12);
    expect(n2.hits.filter((h) => h.path === `/Archives/edgar/data/${NVDA}/${SECOND_8K}.txt`)).toHaveLength(2);
    expect(n2.hits.some((h) => h.path.endsWith(`${EARNINGS_8K}.txt`))).toBe(false);
    expect(completeSubmissionProblem(await readFile(filingFile(path.join(inputDir, 'sec'), NVDA, SECOND_8K)))).toBeNull();
    reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const accs = await reader.query(`SELECT DISTINCT accession FROM doc_events WHERE cik = $c ORDER BY accession`, { c: NVDA });
      expect(accs.map((r) => r.accession)).toEqual([EARNINGS_8K, SECOND_8K]);
    } finally {
      await reader.close();
    }

    // Night 3, nothing new: the ticker file answers 304, the two pending days are asked again (still 404), nothing
    // is downloaded and the run is skipped (nothing published).
    const before = (await readCurrentManifest(dataDir, 'registry'))!.snapshot_id;
    const n3 = await night(config({ EDGAR_DAILY_UNTIL: '2026-03-09' }), inputDir);
    expect(n3.hits.map((h) => `${h.status} ${h.path}`)).toEqual([
      '304 /files/company_tickers_exchange.json',
      `404 ${dailyIndexUrlPath('2026-03-08')}`,
      `404 ${dailyIndexUrlPath('2026-03-09')}`,
    ]);
    expect(n3.report.skipped).toBe(true);
    expect((await readCurrentManifest(dataDir, 'registry'))!.snapshot_id).toBe(before);
    expect(replay.maxSecRate()).toBeLessThanOrEqual(10);
  });

  it('fills people from Forms 4 of a universe given as CIKs, and reports a removed filing without parsing it', async () => {
    const { dataDir, inputDir, config } = await setup('form4');
    // 2025-03-07: two Forms 4 (issuers 1835856 and 1327811); 2025-03-12: one (1158463), removed from EDGAR here.
    const removed = [...replay.world.submissions].find(([, s]) => s.filed === '2025-03-12')!;
    const removedPath = `/Archives/edgar/data/1158463/${removed[0]}.txt`;
    replay.override(removedPath, null);
    const n = await night(
      config({ EDGAR_FETCH_CIKS: '1835856,1327811,1158463', EDGAR_DAILY_SINCE: '2025-03-05', EDGAR_DAILY_UNTIL: '2025-03-14' }),
      inputDir,
    );
    replay.restore(removedPath);
    expect(n.report.failed_children).toBe(0);
    expect(n.hits.some((h) => h.path === '/files/company_tickers_exchange.json')).toBe(false);
    const fetchOutcome = n.report.children.find((c) => c.step === 'fetch' && c.key.startsWith('edgar-fetch-filings-'))!;
    expect(fetchOutcome.detail!.missing).toEqual([`${replay.baseUrl}${removedPath}`]);
    const file = filingFile(path.join(inputDir, 'sec'), 1158463, removed[0]);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(missingMarker(file))).toBe(true);
    const reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const roles = await reader.query(`SELECT DISTINCT cik FROM people_roles WHERE source_kind = 'ownership' ORDER BY cik`);
      expect(roles.map((r) => Number(r.cik))).toEqual([1327811, 1835856]);
      const people = await reader.query(`SELECT count(*)::INTEGER AS n FROM people`);
      expect(people[0]!.n).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
  });

  it('rejects an HTML page served as a daily index with its URL and line, and leaves the snapshot and cursor as they were', async () => {
    const { dataDir, inputDir, config } = await setup('html');
    // Night 1 passes 2026-02-20 .. 22 (no index, settled): cursor 2026-02-22.
    await night(config({ EDGAR_FETCH_CIKS: String(NVDA), EDGAR_DAILY_SINCE: '2026-02-20', EDGAR_DAILY_UNTIL: '2026-02-24' }), inputDir);
    expect(await readDailyCursor(dataDir)).toBe('2026-02-22');
    const before = await readCurrentManifest(dataDir, 'registry');
    replay.fault(dailyIndexUrlPath('2026-02-25'), { times: 1, mode: 'html200' });
    const n = await night(config({ EDGAR_FETCH_CIKS: String(NVDA), EDGAR_DAILY_UNTIL: '2026-02-26' }), inputDir);
    expect(n.report.plan_rejects).toEqual([
      { file: `${replay.baseUrl}${dailyIndexUrlPath('2026-02-25')}`, reason: expect.stringMatching(/not an EDGAR index file/) },
    ]);
    // Nothing after the bad day was read: no filing fetched, nothing published, the cursor stays before it.
    expect(n.hits.map((h) => h.path)).toEqual(['2026-02-23', '2026-02-24', '2026-02-25'].map(dailyIndexUrlPath));
    expect(n.report.skipped).toBe(true);
    expect((await readCurrentManifest(dataDir, 'registry'))!.snapshot_id).toBe(before!.snapshot_id);
    expect(await readDailyCursor(dataDir)).toBe('2026-02-22');
    expect(existsSync(path.join(inputDir, 'sec', 'index', 'daily', '2026', 'QTR1', 'master.20260225.idx'))).toBe(false);
  });

  it('rejects the misaligned rows of a daily index with the file and line, and keeps its good rows', async () => {
    const { dataDir, inputDir, config } = await setup('misaligned');
    const idx = dailyIndexUrlPath('2026-02-25');
    const body = (await (await fetch(`${replay.baseUrl}${idx}`)).text()).split('\n');
    const at = body.findIndex((l) => l.startsWith('----')) + 1;
    // A company name overflowing its column pushes the CIK out of place, as in the real quarterly edge case.
    body.splice(at, 0, 'ACME HOLDINGS|INC|1045810|8-K|20260225|edgar/data/1045810/0001045810-26-999999.txt');
    replay.override(idx, body.join('\n'));
    try {
      const n = await night(
        config({ EDGAR_FETCH_CIKS: String(NVDA), EDGAR_DAILY_SINCE: '2026-02-25', EDGAR_DAILY_UNTIL: '2026-02-25' }),
        inputDir,
      );
      expect(n.report.failed_children).toBe(0);
      expect(n.hits.map((h) => h.path)).toContain(`/Archives/edgar/data/${NVDA}/${EARNINGS_8K}.txt`);
    } finally {
      replay.restore(idx);
    }
    const reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const rj = await reader.query(`SELECT file, line::INTEGER AS line, reason FROM rejects WHERE dataset = 'sec-edgar/index'`);
      expect(rj).toEqual([
        { file: 'index/daily/2026/QTR1/master.20260225.idx', line: at + 1, reason: 'expected 5 pipe-delimited fields, found 6' },
      ]);
    } finally {
      await reader.close();
    }
  });
});
