/**
 * Acceptance on the real EDGAR fixtures: every file under ../shared/fixtures/sec/
 * that the registry pipeline reads is ingested in process; malformed and empty
 * index files come out as rejects; golden checks for the cases.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, fixture, HAS_SHARED } from '../helpers/shared.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { silentLogger } from '../../lib/log.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { buildRegistryApp, getJson } from './layers-app.ts';

describe.skipIf(!HAS_SHARED)('registry ingest of ../shared/fixtures/sec', () => {
  let dir: string;
  let reader: SnapshotReader;
  let svc: Awaited<ReturnType<typeof buildRegistryApp>>;
  const q = (sql: string, p?: Record<string, string | number | null>) => reader.query(sql, p);

  beforeAll(async () => {
    dir = await tempDir('proofline-registry-fixtures-');
    const config = testConfig(dir);
    await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir: FIXTURES, force: true, backoffMs: 1 });
    reader = await SnapshotReader.open(dir, 'registry', { poolSize: 2 });
    svc = await buildRegistryApp(config);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await reader?.close();
    await removeDir(dir);
  });

  it('completes with exactly the malformed and empty index files as rejects (file and reason)', async () => {
    const rejects = await q(`SELECT file, line, reason FROM rejects ORDER BY file`);
    expect(rejects).toEqual([
      { file: 'index/edge-cases/badform.idx.txt', line: '17', reason: expect.stringContaining("CIK 'ER  820694' is not a number") },
      { file: 'index/edge-cases/empty-form.idx', line: '10', reason: 'index file has a header but no rows (empty day?)' },
    ]);
    const failed = await q(`SELECT document FROM documents WHERE status = 'failed'`);
    expect(failed).toEqual([]);
    const [counts] = await q(
      `SELECT (SELECT count(*) FROM documents)::INTEGER AS documents, (SELECT count(*) FROM index_entries)::INTEGER AS index_rows, (SELECT count(*) FROM company_facts)::INTEGER AS facts`,
    );
    expect(counts).toEqual({ documents: 128, index_rows: 17_037, facts: 23 });
  });

  it('AAPL identity fields', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/AAPL?detail=full');
    expect(status).toBe(200);
    await expect(JSON.stringify(body.identity, null, 2) + '\n').toMatchFileSnapshot('../golden/edgar/aapl-identity.json');
    expect(verifyLeaf(body.origin)).toBe(true);
  });

  it('NVDA 8-K item 5.02 becomes a leadership-change timeline event read from the document', async () => {
    const { body } = await getJson(svc.app, '/api/company/NVDA/timeline?origins=full&detail=full&limit=200');
    const ev = body.events.find((e: { accession: string; item: string }) => e.accession === '0001045810-26-000024' && e.item === '5.02');
    expect(ev).toMatchObject({
      type: 'leadership_change',
      date: '2026-03-02',
      filing_date: '2026-03-06',
      basis: 'document',
      document_url: 'https://www.sec.gov/Archives/edgar/data/1045810/000104581026000024/nvda-20260302.htm',
    });
    expect(ev.summary).toContain('Variable Compensation Plan');
    expect(verifyLeaf(ev.origin)).toBe(true);
    expect(ev.origin.source_url).toMatch(/^https:\/\/www\.sec\.gov\/Archives\/edgar\/data\/1045810\/000104581026000024\//);
  });

  it('a Disney 8-K 2.02 (old CIK 1001039) becomes a confirmed earnings date; Apple cross-checks the SGML header', async () => {
    const dis = await q(
      `SELECT event_date, confirmed, timing, accession FROM earnings_calendar WHERE cik = 1001039 AND confirmed ORDER BY event_date LIMIT 2`,
    );
    expect(dis).toEqual([
      { event_date: '2012-02-07', confirmed: true, timing: 'unknown', accession: '0001193125-12-043763' },
      { event_date: '2012-05-08', confirmed: true, timing: 'unknown', accession: '0001193125-12-218486' },
    ]);
    const { body } = await getJson(svc.app, '/api/company/AAPL/earnings');
    // The complete submission's SGML header (ET) agrees with the submissions JSON, whose Apple labels are ET marked Z.
    const [feb] = await q(
      `SELECT event_date, timing, timing_basis, acceptance_check, acceptance_et FROM earnings_calendar WHERE accession = '0000320193-24-000005'`,
    );
    expect(feb).toEqual({
      event_date: '2024-02-01',
      timing: 'AMC',
      timing_basis: 'sgml_header',
      acceptance_check: 'agrees',
      acceptance_et: '2024-02-01T16:30:30',
    });
    expect(body.confirmed[0]).toMatchObject({ confirmed: true, timing: 'AMC', timing_basis: 'acceptance_et_labelled_z' });
    expect(body.predicted[0]).toMatchObject({ confirmed: false, timing_basis: 'history' });
    expect(body.predicted[0].confidence).toBeGreaterThan(0.3);
  });

  it('every earnings row says how its timing was established; NVIDIA 2026-02-25 is never a plain DMH (issue 26)', async () => {
    const rows = await q(
      `SELECT accession, timing, timing_established, acceptance_et FROM earnings_calendar WHERE cik = 1045810 AND accession IN ('0001045810-26-000019', '0001045810-25-000228') ORDER BY accession`,
    );
    // 21:20Z on its filing date can only be UTC (an Eastern 17:30+ acceptance is filed the next business day).
    expect(rows[0]).toMatchObject({
      accession: '0001045810-25-000228',
      timing: 'AMC',
      timing_established: 'acceptance_utc_proven',
      acceptance_et: '2025-11-19T16:20:44',
    });
    // 16:31Z is Eastern wall-clock (its SGML header, in ../shared/fixtures/sec/corpus, says 163125), but the
    // submissions JSON alone proves nothing: read as UTC it is DMH, as Eastern AMC, so the row says it is uncertain.
    expect(rows[1]).toMatchObject({ accession: '0001045810-26-000019', timing_established: 'uncertain' });
    const missing = await q(`SELECT count(*)::INTEGER AS n FROM earnings_calendar WHERE timing_established IS NULL`);
    expect(missing[0].n).toBe(0);
    const { body } = await getJson(svc.app, '/api/company/NVDA/earnings');
    expect(body.timing_established_legend.uncertain).toContain('guess');
    expect(body.confirmed.every((e: { timing_established: string }) => typeof e.timing_established === 'string')).toBe(true);
  });

  it('BLK and MRVL keep their ticker across a CIK change; JWN/ATVI-style take-privates are not active', async () => {
    const rows = await q(
      `SELECT ticker, cik, status FROM company_lookup WHERE ticker IN ('BLK', 'MRVL', 'JWN', 'ATVI', 'PXD', 'HES', 'SPLK', 'X', 'LCW') ORDER BY ticker`,
    );
    await expect(JSON.stringify(rows, null, 1) + '\n').toMatchFileSnapshot('../golden/edgar/status-cik-changes.json');
    expect(rows.find((r) => r.ticker === 'BLK')).toMatchObject({ cik: 2012383, status: 'active' });
    expect(rows.find((r) => r.ticker === 'MRVL')).toMatchObject({ cik: 1835632, status: 'active' });
    for (const t of ['JWN', 'ATVI', 'PXD', 'HES', 'SPLK']) expect(rows.find((r) => r.ticker === t)?.status).not.toBe('active');
    const carbo = await q(`SELECT status, status_reason FROM company_lookup WHERE cik = 1009672`);
    expect(carbo[0]).toMatchObject({ status: 'delisted', status_reason: expect.stringContaining('1.03') });
  });

  it('Alphabet gets shares outstanding (us-gaap fallback) in its profile', async () => {
    const { status, body } = await getJson(svc.app, '/api/company/GOOGL/profile?origins=full&detail=full');
    expect(status).toBe(200);
    expect(body.key_facts.shares_outstanding).toMatchObject({
      value: 12_116_000_000,
      concept: 'us-gaap:CommonStockSharesOutstanding',
      as_of: '2026-03-31',
    });
    expect(verifyLeaf(body.key_facts.shares_outstanding.origin)).toBe(true);
    const goog = readFileSync(fixture('sec/companyfacts/CIK0001652044.json'));
    expect(body.key_facts.shares_outstanding.origin.content_sha256).toBe(sha256Hex(goog));
  });

  it('each signal type comes from a real 10-K with its accession, section and evidence', async () => {
    const rows = await q(
      `SELECT signal_type, ticker, accession, section, strength FROM signal_hits WHERE strength >= 2 ORDER BY signal_type, ticker, section`,
    );
    await expect(JSON.stringify(rows, null, 1) + '\n').toMatchFileSnapshot('../golden/edgar/signals.json');
    expect(new Set(rows.map((r) => r.signal_type))).toEqual(new Set(['capex_increase', 'ai_adoption', 'restructuring', 'litigation_risk']));
    const { body } = await getJson(svc.app, '/api/signals?type=capex_increase&ticker=NVDA');
    expect(body.signals[0]).toMatchObject({ ticker: 'NVDA', accession: '0001045810-25-000023', section: 'Item 7', strength: 2 });
    const nvda10k = readFileSync(fixture('sec/filings/10-K/nvda-10-k-2025-02-26.html'));
    expect(body.signals[0].origin.content_sha256).toBe(sha256Hex(nvda10k));
  });

  it('people: Forms 3/4/5 and 10-K executive lists, with person careers', async () => {
    const { body } = await getJson(svc.app, '/api/company/NVDA/people');
    expect(body.executives.map((p: { name: string }) => p.name)).toContain('Jen-Hsun Huang');
    expect(body.board.map((p: { name: string }) => p.name)).toContain('Mark A Stevens');
    const cook = await getJson(svc.app, '/api/person/tim%20cook');
    expect(cook.status).toBe(404);
    const p = await getJson(svc.app, '/api/person/timothy%20d%20cook');
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ schema: 'proofline/sec-person/v1', person: { name: 'Timothy D Cook' } });
    expect(p.body.career.map((c: { role: string }) => c.role).sort()).toEqual(['Chief Executive Officer', 'Director']);
  });

  it('filings: EDGAR URLs and extraction status; form filter validated', async () => {
    const { body } = await getJson(svc.app, '/api/company/NVDA/filings?form=10-K');
    const k = body.filings.find((f: { accession: string }) => f.accession === '0001045810-25-000023');
    expect(k).toMatchObject({
      form: '10-K',
      extraction_status: 'extracted',
      document_url: 'https://www.sec.gov/Archives/edgar/data/1045810/000104581025000023/nvda-20250126.htm',
      index_url: 'https://www.sec.gov/Archives/edgar/data/1045810/000104581025000023/0001045810-25-000023-index.html',
    });
    expect(body.filings.every((f: { form: string }) => f.form.startsWith('10-K'))).toBe(true);
    expect(body.filings.some((f: { extraction_status: string }) => f.extraction_status === 'pending')).toBe(true);
    const bad = await getJson(svc.app, '/api/company/NVDA/filings?form=S-1');
    expect(bad).toMatchObject({ status: 400, body: { parameter: 'form' } });
  });
});
