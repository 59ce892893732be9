/**
 * The transcripts fetch step (TRANSCRIPTS_IR_URLS) against the replay server: a listed investor-relations PDF is
 * fetched with the IR client, parsed, and its transcript carries the fetch leaf (URL, time); the next run fetches
 * nothing and publishes nothing; a malformed list entry is an error naming it.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { parseIrUrls } from '../../jobs/transcripts/ir-fetch.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
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
});
