/**
 * The transcripts fetch step (TRANSCRIPTS_IR_URLS) against the replay server: a listed investor-relations PDF is
 * fetched with the IR client, parsed, and its transcript carries the fetch leaf (URL, time); the next run fetches
 * nothing and publishes nothing; a malformed list entry is an error naming it. An IR page in HTML (served on
 * loopback: the real INTC PDF's text as HTML) is read as the same transcript.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { parseIrUrls } from '../../jobs/transcripts/ir-fetch.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { buildExtraction } from '../../ingest/transcripts/extract.ts';
import { extractPdfPages } from '../../ingest/transcripts/pdf-text.ts';
import { parseTranscriptText } from '../../ingest/transcripts/text-transcript.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { FIXTURES, HAS_SHARED } from '../helpers/shared.ts';

describe('parseIrUrls', () => {
  it('reads TICKER_YYYYQn=URL entries and names a bad one', () => {
    expect(parseIrUrls('intc_2025Q3=https://ir.example/t.pdf, AMRZ_2025Q3=http://x.test/a.pdf')).toEqual([
      { name: 'INTC_2025Q3.pdf', url: 'https://ir.example/t.pdf' },
      { name: 'AMRZ_2025Q3.pdf', url: 'http://x.test/a.pdf' },
    ]);
    expect(() => parseIrUrls('INTC=https://ir.example/t.pdf')).toThrow(/TRANSCRIPTS_IR_URLS: "INTC=/);
  });

  it('names a URL whose path is not a PDF as an HTML page', () => {
    expect(parseIrUrls('INTC_2025Q3=https://ir.example/events/q3-transcript?lang=en')).toEqual([
      { name: 'INTC_2025Q3.html', url: 'https://ir.example/events/q3-transcript?lang=en' },
    ]);
  });
});

describe.skipIf(!HAS_SHARED)('transcripts fetch step (replay server)', { timeout: 120_000 }, () => {
  let replay: ReplayServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    replay = await startReplayServer(FIXTURES);
  });
  afterAll(async () => {
    await replay.close();
    for (const d of dirs) await removeDir(d);
  });

  it('fetches a listed IR transcript once, with its fetch leaf, and not again', async () => {
    const dataDir = await tempDir('proofline-ir-fetch-');
    dirs.push(dataDir);
    const inputDir = path.join(dataDir, 'input');
    const url = `${replay.baseUrl}/ir/INTC_2025Q3.pdf`;
    const config = testConfig(dataDir, { TRANSCRIPTS_IR_URLS: `INTC_2025Q3=${url}` });
    const r1 = await runPipelineInProcess(transcriptsPipeline, { config, log: silentLogger, inputDir, backoffMs: 1 });
    expect(r1.failed_children).toBe(0);
    expect(replay.count('/ir/INTC_2025Q3.pdf')).toBe(1);
    const reader = await SnapshotReader.open(dataDir, 'transcripts', { poolSize: 1 });
    try {
      const rows = await reader.query(`SELECT ticker, json_extract_string(fetch_origin, '$.source_url') AS url FROM transcripts`);
      expect(rows).toEqual([{ ticker: 'INTC', url }]);
    } finally {
      await reader.close();
    }
    const r2 = await runPipelineInProcess(transcriptsPipeline, { config, log: silentLogger, inputDir, backoffMs: 1 });
    expect(r2.skipped).toBe(true);
    expect(replay.count('/ir/INTC_2025Q3.pdf')).toBe(1);
  });

  it('fetches an IR transcript published as an HTML page and reads it as the same transcript as its PDF', async () => {
    // The page: the real INTC PDF's text as paragraphs, with a script, a style and entities, served on loopback.
    const pages = await extractPdfPages(
      readFileSync(path.join(FIXTURES, 'sec', 'transcripts', 'pdf', 'INTC_2025Q3.pdf')),
      'INTC_2025Q3.pdf',
    );
    const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const html = `<!doctype html><html><head><title>Q3 2025</title><style>p{margin:0}</style><script>var x = "<p>not text</p>";</script></head><body><div class="transcript">${pages
      .join('\n')
      .split('\n')
      .map((l) => `<p>${esc(l)}</p>`)
      .join('\n')}</div></body></html>`;
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const dataDir = await tempDir('proofline-ir-html-');
      dirs.push(dataDir);
      const inputDir = path.join(dataDir, 'input');
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/investors/events/intc-q3-2025-transcript`;
      const config = testConfig(dataDir, { TRANSCRIPTS_IR_URLS: `INTC_2025Q3=${url}` });
      const r1 = await runPipelineInProcess(transcriptsPipeline, { config, log: silentLogger, inputDir, backoffMs: 1 });
      expect(r1.failed_children).toBe(0);
      expect(hits).toBe(1);
      const fromPdf = parseTranscriptText(pages, { ticker: 'INTC', fiscal_year: 2025, fiscal_quarter: 3 }, 'pdf');
      const reader = await SnapshotReader.open(dataDir, 'transcripts', { poolSize: 1 });
      try {
        const rows = await reader.query(
          `SELECT ticker, format, call_date::VARCHAR AS call_date, json_array_length(speakers)::INTEGER AS speakers, json_extract_string(fetch_origin, '$.source_url') AS url FROM transcripts`,
        );
        expect(rows).toEqual([
          { ticker: 'INTC', format: 'html', call_date: fromPdf.call_date, speakers: buildExtraction(fromPdf).speakers.length, url },
        ]);
        expect(rows[0]!.speakers).toBeGreaterThan(0);
      } finally {
        await reader.close();
      }
      const r2 = await runPipelineInProcess(transcriptsPipeline, { config, log: silentLogger, inputDir, backoffMs: 1 });
      expect(r2.skipped).toBe(true);
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });
});
