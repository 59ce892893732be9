/**
 * The registry's fetch step, in process: with EDGAR_FETCH_* configured a run
 * downloads submissions, companyfacts and the ticker file from a local fake
 * EDGAR (replaying ../shared/fixtures/sec) into its input directory with
 * sidecars, parses them after the fetch, and the origin leaves carry the fetch
 * URL and retrieval time; without configuration nothing is fetched.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { planEdgarFetch, parseCikList } from '../../jobs/registry/registry-fetch.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { processPlan } from '../../jobs/processors.ts';
import { silentLogger } from '../../lib/log.ts';
import { closeSecLimiter } from '../../lib/sec-limiter.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { startFakeEdgar, type FakeEdgar } from '../helpers/fake-edgar.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';

const UA = 'Proofline Tests tests@proofline.example';

describe('parseCikList', () => {
  it('reads comma and space separated CIKs, sorted and unique', () => {
    expect(parseCikList('320193, 0001045810 320193')).toEqual([320193, 1045810]);
    expect(() => parseCikList('320193,AAPL')).toThrow(/EDGAR_FETCH_CIKS/);
  });
});

describe.skipIf(!HAS_SHARED)('registry fetch step (in process)', { timeout: 120_000 }, () => {
  let edgar: FakeEdgar;
  const dirs: string[] = [];
  beforeAll(async () => {
    edgar = await startFakeEdgar(fixture('sec'), { failures: { '/submissions/CIK0000789019.json': { times: 5 } } });
  });
  afterEach(async () => {
    await closeSecLimiter();
  });
  afterAll(async () => {
    await edgar.close();
    for (const d of dirs) await removeDir(d);
  });
  const setup = async (env: Record<string, string>) => {
    const dataDir = await tempDir('proofline-registry-fetch-');
    dirs.push(dataDir);
    const config = testConfig(dataDir, {
      SEC_USER_AGENT: UA,
      SEC_WWW_BASE_URL: edgar.baseUrl,
      SEC_DATA_BASE_URL: edgar.baseUrl,
      SEC_RATE_LIMIT: '10',
      ...env,
    });
    return { dataDir, inputDir: path.join(dataDir, 'input'), config };
  };

  it('plans nothing and touches no server when no EDGAR source is configured', async () => {
    const { inputDir, config } = await setup({});
    const before = edgar.hits.length;
    expect(await planEdgarFetch({ config, runId: 'r', inputDir, log: silentLogger })).toEqual([]);
    const plan = await processPlan(registryPipeline, { config, runId: 'registry-nofetch', inputDir, log: silentLogger });
    expect(plan!.fetches).toEqual([]);
    expect(plan!.children.some((c) => c.after?.length)).toBe(false);
    expect(edgar.hits.length).toBe(before);
  });

  it('fetches, retries a transient failure alone, skips a 404 and publishes leaves naming the fetch URL', async () => {
    const { dataDir, inputDir, config } = await setup({
      EDGAR_FETCH_CIKS: '320193,1045810,789019,1652044',
      EDGAR_FETCH_TICKERS: '1',
      EDGAR_FETCH_BATCH: '2',
    });
    // A stale companyfacts file of a CIK EDGAR no longer serves (789019 has only a .json.gz fixture) is removed, not parsed.
    await mkdir(path.join(inputDir, 'sec', 'companyfacts'), { recursive: true });
    await writeFile(
      path.join(inputDir, 'sec', 'companyfacts', 'CIK0000789019.json'),
      await readFile(fixture('sec/companyfacts/CIK0000320193.json')),
    );
    const report = await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir, force: true, backoffMs: 1 });
    expect(report.skipped).toBe(false);
    const fetchOutcomes = report.children.filter((c) => c.step === 'fetch');
    expect(fetchOutcomes.map((c) => c.key).sort()).toEqual([
      'edgar-fetch-companyfacts-0000320193-2',
      'edgar-fetch-companyfacts-0001045810-2',
      'edgar-fetch-submissions-0000320193-2',
      'edgar-fetch-submissions-0001045810-2',
      'edgar-fetch-tickers',
    ]);
    expect(fetchOutcomes.every((c) => c.status === 'completed')).toBe(true);
    // Microsoft answered 503 five times: the client's 4 attempts failed the first job attempt, and the job
    // retry re-requested only Microsoft (Apple, fetched by the failed attempt of the same job, was kept).
    expect(edgar.count('/submissions/CIK0000789019.json')).toBe(6);
    expect(edgar.count('/submissions/CIK0000320193.json')).toBe(1);
    expect(edgar.count('/files/company_tickers_exchange.json')).toBe(1);
    expect(edgar.hits.every((h) => h.userAgent === UA)).toBe(true);
    expect(existsSync(path.join(inputDir, 'sec', 'companyfacts', 'CIK0000789019.json'))).toBe(false);
    expect(report.children.filter((c) => c.status === 'failed')).toEqual([]);

    const reader = await SnapshotReader.open(dataDir, 'registry', { poolSize: 1 });
    try {
      const companies = await reader.query(
        `SELECT cik, json_extract_string(origin, '$.source_url') AS url, json_extract_string(origin, '$.retrieved_at') AS at FROM companies ORDER BY cik`,
      );
      expect(companies.map((c) => Number(c.cik))).toEqual([320193, 789019, 1045810]);
      expect(edgar.count('/submissions/CIK0001652044.json')).toBe(1);
      for (const c of companies) {
        expect(c.url).toMatch(new RegExp(`^${edgar.baseUrl}/submissions/CIK\\d{10}\\.json$`));
        expect(c.at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      }
      const facts = await reader.query(`SELECT DISTINCT cik FROM company_facts ORDER BY cik`);
      // Alphabet has companyfacts but no submissions fixture (404: missing); Microsoft's stale copy was removed.
      expect(facts.map((f) => Number(f.cik))).toEqual([320193, 1045810, 1652044]);
      const [t] = await reader.query(`SELECT count(*)::INTEGER AS n FROM ticker_snapshots WHERE is_current`);
      expect(t!.n).toBeGreaterThan(1000);
    } finally {
      await reader.close();
    }
  });
});
