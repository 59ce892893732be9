/**
 * Incremental quotes runs (issue 18, item 6) on the small deterministic sample plus a splits reference file and a
 * file with a bad row: an unchanged input is not parsed again (its parts are reused from the current snapshot,
 * jobs/quotes/quote-input-parts.ts), a removed one drops its rows, a run with nothing changed publishes nothing
 * new, and every published table equals that of a full run over the same inputs after the same previous snapshot.
 */
import { cp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { listInputs } from '../../jobs/inputs.ts';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { silentLogger } from '../../lib/log.ts';
import { readCurrentManifest, tableFilePaths } from '../../lib/warehouse/snapshot.ts';
import { snapshotDir, stagingDir } from '../../lib/warehouse/layout.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { expectSameRows, publishedRows, VOLATILE_COLUMNS } from '../helpers/snapshot-rows.ts';
import { writeInput } from './quotes-fixture.ts';

/** Quotes' run history shows in `recorded_run_id`; only `sources` is cumulative (a row per file and run). */
const tableRows = (dataDir: string) =>
  publishedRows(dataDir, 'quotes', { volatile: [...VOLATILE_COLUMNS, 'recorded_run_id'], cumulative: ['sources'] });

describe('incremental quotes runs', () => {
  let dir: string;
  let input: string;
  let fileCount = 0;
  let ticker = '';
  const run = (dataDir: string, opts: { force?: boolean; full?: boolean } = {}) =>
    runPipelineInProcess(quotesPipeline, {
      config: testConfig(dataDir),
      log: silentLogger,
      inputDir: input,
      force: opts.force ?? true,
      full: opts.full,
      backoffMs: 1,
      concurrency: 2,
    });
  const inc = () => `${dir}/data`;
  const full = () => `${dir}/data-full`;
  const meta = async (d: string) => (await readCurrentManifest(d, 'quotes'))!.meta.incremental;

  beforeAll(async () => {
    dir = await tempDir('proofline-quotes-incremental-');
    await ensureSample(`${dir}/sample`, { scale: 'small', seed: 42, generators: [quotesSampleGenerator] });
    input = `${dir}/input`;
    await cp(`${dir}/sample`, input, { recursive: true, preserveTimestamps: true });
    await rm(path.join(input, '.complete'), { force: true });
    const raw = await readFile(path.join(input, 'quotes/alpaca-sdk/bars-raw-000.csv'), 'utf8');
    ticker = raw.split('\n')[1].split(',')[1];
    const splitDay = raw.split('\n')[100].slice(0, 10);
    // A split of the first ticker (applied at publish: quote_split_adjustments) and a file with a bad row (a reject).
    await writeInput(
      input,
      `polygon/reference/${splitDay}_splits.json`,
      JSON.stringify({ results: [{ ticker, execution_date: splitDay, split_from: 1, split_to: 4 }], status: 'OK' }),
    );
    await writeInput(
      input,
      'extra/bad.csv',
      'timestamp,symbol,open,high,low,close,volume,vwap,trade_count\n2025-01-02 05:00:00+00:00,ZZBAD,1,2,1,1.5,100,1.4,3\n2025-01-03 05:00:00+00:00,ZZBAD,x,2,1,1.5,100,1.4,3\n',
    );
    for (const d of [inc(), full()]) {
      const first = await run(d);
      expect(first.failed_children).toBe(0);
    }
    fileCount = (await listInputs(path.join(input, 'quotes'), /\.(csv|json)$/i)).length;
  }, 300_000);
  afterAll(async () => {
    await removeDir(dir);
  });

  it('a first run parses every input', async () => {
    expect(fileCount).toBeGreaterThanOrEqual(5);
    expect(await meta(inc())).toEqual({ parsed: fileCount, reused: 0, removed: 0 });
  });

  it('a run with nothing changed publishes nothing new; forced, it parses no file and publishes the same rows', async () => {
    const before = await tableRows(inc());
    expect(before.rejects).toEqual([expect.stringContaining('extra/bad.csv')]);
    expect(before.quote_split_adjustments.length).toBeGreaterThan(0);
    const current = (await readCurrentManifest(inc(), 'quotes'))!.snapshot_id;
    const skipped = await run(inc(), { force: false });
    expect(skipped.skipped).toBe(true);
    expect((await readCurrentManifest(inc(), 'quotes'))!.snapshot_id).toBe(current);
    // The parts the plan linked for the skipped run are gone with its staging directory.
    await expect(stat(stagingDir(inc(), 'quotes', skipped.run_id))).rejects.toThrow(/ENOENT/);

    const barInodes = async () => {
      const m = (await readCurrentManifest(inc(), 'quotes'))!;
      const files = tableFilePaths(snapshotDir(inc(), 'quotes', m.snapshot_id), 'quote_bars', m.tables.quote_bars);
      return (await Promise.all(files.map(async (f) => (await stat(f)).ino))).sort();
    };
    const inodes = await barInodes();
    const forced = await run(inc());
    expect(forced.children).toEqual([]);
    // Nothing sorted or written again: quote_bars is the previous snapshot's files (parts and sorted groups), linked.
    expect(await barInodes()).toEqual(inodes);
    expect(await meta(inc())).toEqual({ parsed: 0, reused: fileCount, removed: 0 });
    expectSameRows(await tableRows(inc()), before);
  }, 120_000);

  it('one file changed, one removed, one added: parses exactly the changed and added ones and equals a full run', async () => {
    // Changed: one close of the first raw file (a corrected bar: later days of that chain are re-chained).
    const rawFile = path.join(input, 'quotes/alpaca-sdk/bars-raw-000.csv');
    const lines = (await readFile(rawFile, 'utf8')).split('\n');
    const cells = lines[10].split(',');
    cells[5] = String(Number(cells[5]) + 1);
    lines[10] = cells.join(',');
    await writeFile(rawFile, lines.join('\n'));
    // Removed: the file with the bad row (its bars and its reject go).
    await rm(path.join(input, 'quotes/extra/bad.csv'));
    // Added: two later days of the first ticker (its raw chain now spans two files) and a new ticker.
    await writeInput(
      input,
      'extra/new.csv',
      `timestamp,symbol,open,high,low,close,volume,vwap,trade_count\n2099-01-02 05:00:00+00:00,${ticker},10,11,9,10.5,1000,10.2,30\n2099-01-05 05:00:00+00:00,${ticker},10.5,11,10,10.8,900,10.6,25\n2099-01-02 05:00:00+00:00,ZZNEW,5,6,4,5.5,100,5.2,7\n`,
    );

    const report = await run(inc());
    expect(report.failed_children).toBe(0);
    expect(report.children.map((c) => c.key).sort()).toEqual(['alpaca-sdk/bars-raw-000.csv', 'extra/new.csv']);
    expect(await meta(inc())).toEqual({ parsed: 2, reused: fileCount - 2, removed: 1 });
    const expected = await run(full(), { full: true });
    expect(expected.children).toHaveLength(fileCount);

    const rows = await tableRows(inc());
    expectSameRows(rows, await tableRows(full()));
    expect(rows.rejects).toEqual([]);
    expect(rows.quote_bars.some((r) => r.includes('"ZZBAD"'))).toBe(false);
    expect(rows.quote_bars.some((r) => r.includes('"ZZNEW"'))).toBe(true);
    // The corrected bar forked its chain: the old leaves are in the history, in both warehouses alike.
    expect(rows.quote_leaf_history.some((r) => r.includes('"corrected"'))).toBe(true);
    expect(rows.quote_leaf_history.some((r) => r.includes('"removed"'))).toBe(true);

    // Next night, nothing changed again: every input reused.
    await run(inc());
    expect(await meta(inc())).toEqual({ parsed: 0, reused: fileCount, removed: 0 });
    expectSameRows(await tableRows(inc()), rows);
  }, 300_000);
});
