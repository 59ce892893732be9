/**
 * Incremental transcripts runs (issue 18, item 6) on the small sample: nothing changed parses nothing; one
 * changed markdown transcript parses exactly that file; each snapshot holds the rows of a full run over the
 * same inputs (topics, which name no input, go with their transcript).
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listInputs } from '../../jobs/inputs.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { transcriptsSampleGenerator } from '../../ingest/transcripts/transcripts.sample.ts';
import { silentLogger } from '../../lib/log.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { expectSameRows, publishedRows } from '../helpers/snapshot-rows.ts';

const tableRows = (dataDir: string) => publishedRows(dataDir, 'transcripts');

describe('incremental transcripts runs', () => {
  let dir: string;
  let input: string;
  let total = 0;
  const run = (dataDir = `${dir}/data`) =>
    runPipelineInProcess(transcriptsPipeline, {
      config: testConfig(dataDir),
      log: silentLogger,
      inputDir: input,
      force: true,
      backoffMs: 1,
    });

  beforeAll(async () => {
    dir = await tempDir('proofline-transcripts-incremental-');
    await ensureSample(`${dir}/sample`, { scale: 'small', seed: 42, generators: [transcriptsSampleGenerator] });
    input = `${dir}/input`;
    await cp(`${dir}/sample`, input, { recursive: true, preserveTimestamps: true });
    const first = await run();
    total = first.incremental!.parsed;
    expect(first.incremental).toEqual({ parsed: total, reused: 0, removed: 0 });
  }, 180_000);
  afterAll(async () => removeDir(dir));

  it('nothing changed: no file parsed, all reused, same rows', async () => {
    const before = await tableRows(`${dir}/data`);
    const r = await run();
    expect(r.incremental).toEqual({ parsed: 0, reused: total, removed: 0 });
    expect(r.children).toEqual([]);
    expectSameRows(await tableRows(`${dir}/data`), before);
    expect(before.transcript_topics.length).toBeGreaterThan(0);
  }, 120_000);

  it('one changed markdown transcript: exactly that file parsed, rows equal a full run', async () => {
    const md = (await listInputs(path.join(input, 'transcripts'), /\.md$/))[0]!;
    await writeFile(md, `${await readFile(md, 'utf8')}\n`);
    const r = await run();
    expect(r.incremental).toEqual({ parsed: 1, reused: total - 1, removed: 0 });
    expect(r.children.map((c) => c.step)).toEqual(['markdown']);
    await run(`${dir}/full`);
    expectSameRows(await tableRows(`${dir}/data`), await tableRows(`${dir}/full`));
  }, 180_000);
});
