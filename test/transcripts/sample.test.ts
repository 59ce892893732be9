import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { ensureSample } from '../../jobs/sample.ts';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { transcriptsSampleGenerator } from '../../ingest/transcripts/transcripts.sample.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { verifyQuoteChain } from '../../service/quotes/quotes.queries.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

describe('quotes and transcripts over the small sample (PDFs written by pdfkit)', () => {
  let dir: string;
  let svc: TestService;
  beforeAll(async () => {
    dir = await tempDir();
    const input = path.join(dir, 'sample');
    await ensureSample(input, { scale: 'small', seed: 42, generators: [quotesSampleGenerator, transcriptsSampleGenerator] });
    const config = testConfig(path.join(dir, 'data'));
    await ingestAll(config, [quotesPipeline, transcriptsPipeline], input);
    svc = await buildTestService(config, ['quotes', 'transcripts']);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(dir);
  });

  it('parses every sample PDF with its participants, sections and fetch → PDF → extraction chain', async () => {
    const rows = await svc.deps.readers.transcripts.query(
      `SELECT ticker, format, qa_present, qa_questions, json_array_length(speakers) AS speakers, fetch_origin IS NOT NULL AS fetched FROM transcripts ORDER BY ticker, format`,
    );
    expect(rows.filter((r) => r.format === 'pdf')).toHaveLength(6);
    for (const r of rows.filter((x) => x.format === 'pdf')) {
      expect(r.fetched).toBe(true);
      expect(Number(r.speakers)).toBeGreaterThanOrEqual(4);
      if (r.qa_present) expect(Number(r.qa_questions)).toBeGreaterThanOrEqual(2);
    }
    expect(rows.some((r) => r.qa_present === false)).toBe(true);
    expect(rows.some((r) => r.format === 'markdown')).toBe(true);
    const { body } = await getJson(svc.app, '/api/company/AAPL/transcripts');
    const pdf = body.transcripts.find((t: any) => t.format === 'pdf');
    // Spec 000: speakers and key_metrics are arrays of strings; the parsed objects are beside them.
    expect(pdf.speakers_detail.filter((s: any) => s.role === 'analyst').length).toBeGreaterThanOrEqual(2);
    expect(pdf.speakers).toEqual(pdf.speakers_detail.map((s: any) => s.name));
    expect(pdf.key_metrics.every((k: unknown) => typeof k === 'string')).toBe(true);
    expect(pdf.key_metrics).toHaveLength(pdf.key_metrics_detail.length);
    expect(pdf.origin.parent).toBe(pdf.source_origin.leaf_hash);
    expect(pdf.source_origin.parent).toBe(pdf.fetch_origin.leaf_hash);
  });

  it('serves sample quotes in both series, flags the NVDA bad print, and every chain verifies', async () => {
    const raw = await getJson(svc.app, '/api/company/AAPL/quote?adjustment=raw');
    const adj = await getJson(svc.app, '/api/company/AAPL/quote?adjustment=split_dividend');
    expect(raw.body).toMatchObject({ adjustment: 'raw', quote_date: '2026-11-20', origin_verified: true });
    expect(adj.body.adjustment).toBe('split_dividend');
    const flagged = await svc.deps.readers.quotes.query(`SELECT ticker, flags FROM quote_bars WHERE len(flags) > 0 AND adjustment = 'raw'`);
    expect(flagged).toEqual([{ ticker: 'NVDA', flags: ['high_above_range'] }]);
    expect((await verifyQuoteChain(svc.deps.readers.quotes, 'NVDA')).valid).toBe(true);
  });
});
