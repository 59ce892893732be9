/**
 * A child reads the next batch's record texts while it folds the current one (`quoteFoldOptions.prefetch`,
 * jobs/quotes/quotes-fold.ts, issue 22 item 3) and appends the leaves once every batch is folded. This ingests the same
 * inputs in batches of a few chains with and without the read-ahead, and with the default batches, and compares every
 * stored file of the bars and their parts byte for byte (bars, lines, tails, chains and leaf-key parts, `quote_bars`,
 * `quote_leaf_keys`, `quote_bar_inputs`, `quote_leaf_history`) and the chain heads store's records (its line order is not
 * fixed: test/quotes/fold-leaves-join.test.ts).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../jobs/processors.ts';
import { quoteFoldOptions } from '../../jobs/quotes/quotes-fold.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { ingestQuotes, linkQuoteFixtures, writeInput } from './quotes-fixture.ts';

/** Stored files that do not depend on the run (its id, clock and input paths are in the others). */
const STORED = /(input-parts\/.*\.parquet|tables\/quote_[a-z_]+(\/\d+)?\.parquet)$/;

/** An Alpaca SDK file in key order: 12 tickers of 70 weekdays each (several batches of 150 bars). */
function orderedCsv(): string {
  const lines = ['timestamp,symbol,open,high,low,close,volume,vwap,trade_count'];
  for (let k = 0; k < 12; k++)
    for (let d = 0; d < 70; d++) {
      const day = new Date(Date.UTC(2024, 0, 1) + (Math.floor(d / 5) * 7 + (d % 5)) * 86_400_000).toISOString().slice(0, 10);
      const p = 10 + k + d / 100;
      lines.push(
        `${day} 05:00:00+00:00,T${String(k).padStart(3, '0')},${p},${p + 0.5},${p - 0.5},${p + 0.25},${1000 + d},${p + 0.1},${d + 1}`,
      );
    }
  return `${lines.join('\n')}\n`;
}

/** The same bars with two tickers' rows swapped: a file out of key order (its batches read with ORDER BY). */
function unorderedCsv(): string {
  const [header, ...rows] = orderedCsv().trim().split('\n');
  return `${[header, ...rows.slice(140, 210), ...rows.slice(0, 140), ...rows.slice(210)].join('\n').replace(/T0/g, 'U0')}\n`;
}

const MODES = ['prefetch', 'serial', 'default'] as const;
type Mode = (typeof MODES)[number];
type Run = { report: RunReport; dataDir: string };
let dir: string;
const runs = new Map<Mode, Run>();

beforeAll(async () => {
  dir = await tempDir('proofline-fold-prefetch-');
  const input = path.join(dir, 'in');
  await linkQuoteFixtures(input);
  await writeInput(input, 'crafted/ordered.csv', orderedCsv());
  await writeInput(input, 'crafted/unordered.csv', unorderedCsv());
  for (const mode of MODES) {
    quoteFoldOptions.prefetch = mode !== 'serial';
    if (mode !== 'default') quoteFoldOptions.batchRows = 150;
    try {
      const config = testConfig(path.join(dir, `data-${mode}`));
      const report = await ingestQuotes(config, input);
      if (report.failed_children) throw new Error(JSON.stringify(report.children));
      runs.set(mode, { report, dataDir: config.dataDir });
    } finally {
      quoteFoldOptions.prefetch = true;
      quoteFoldOptions.batchRows = 65_536;
    }
  }
}, 300_000);
afterAll(async () => {
  await removeDir(dir);
});

/** The files of a run whose path matches `re`, by their path below the snapshot (base64 of their bytes). */
async function stored(mode: Mode, re = STORED): Promise<Map<string, string>> {
  const root = runs.get(mode)!.dataDir;
  const files = (await readdir(root, { recursive: true })).map((f) => f.split(path.sep).join('/')).filter((f) => re.test(f));
  return new Map(
    await Promise.all(
      files.map(async (f) => [f.replace(/^.*\/snapshots\/[^/]+\//, ''), (await readFile(path.join(root, f))).toString('base64')] as const),
    ),
  );
}

describe('the record texts of the next batch read while a batch is folded', () => {
  it('folds the crafted files, in key order and not', () => {
    const details = runs
      .get('prefetch')!
      .report.children.map((c) => ({ key: c.key, ...(c.detail as { folded?: boolean; ordered?: boolean }) }));
    expect(details.find((d) => d.key.endsWith('/ordered.csv'))).toMatchObject({ folded: true, ordered: true });
    expect(details.find((d) => d.key.endsWith('/unordered.csv'))).toMatchObject({ folded: true, ordered: false });
  });

  it('stores the same bars, parts and leaf keys, byte for byte, with and without the read-ahead and in any batches', async () => {
    const prefetch = await stored('prefetch');
    for (const d of ['quote_bar_folds', 'quote_bar_tails', 'quote_leaf_key_parts', 'tables/quote_bars', 'tables/quote_leaf_keys'])
      expect([d, [...prefetch.keys()].some((k) => k.includes(d))]).toEqual([d, true]);
    for (const other of ['serial', 'default'] as const) {
      const files = await stored(other);
      expect([...prefetch.keys()].sort()).toEqual([...files.keys()].sort());
      for (const [k, v] of prefetch) expect([other, k, v === files.get(k)]).toEqual([other, k, true]);
    }
  });

  it('writes the same chain heads store records', async () => {
    const lines = async (mode: Mode) => {
      const [text] = [...(await stored(mode, /packed\/quote_heads\.tsv$/)).values()];
      return Buffer.from(text!, 'base64').toString('utf8').split('\n').sort();
    };
    const prefetch = await lines('prefetch');
    expect(prefetch.length).toBeGreaterThan(25);
    expect(prefetch).toEqual(await lines('serial'));
    expect(prefetch).toEqual(await lines('default'));
  });
});
