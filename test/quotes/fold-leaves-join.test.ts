/**
 * A folded file in key order takes each chain's first row, day count and leaves from `quote_file_leaves` in one join
 * (jobs/quotes/quotes-fold.ts, issue 22 item 3); before, the bars and tails parts joined an aggregate over every row
 * for the first rows and day counts and then the leaves in a second join. This ingests the same inputs both ways
 * (`quoteFoldOptions.joinLeavesOnce`) and compares every stored file of the bars and their parts byte for byte (bars,
 * lines, tails, chains and leaf-key parts, `quote_bars`, `quote_leaf_keys`, `quote_bar_inputs`, `quote_leaf_history`)
 * and the chain heads store line for line: the store's line order is not fixed (two ingests of the same inputs by the
 * same code can write its records in another order, each at the offset its index gives), its records are.
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

/** An Alpaca SDK file in key order: 12 tickers of 70 weekdays each (chains longer than the heads' 31-day tails). */
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

type Run = { report: RunReport; dataDir: string };
let dir: string;
const runs = new Map<'once' | 'twice', Run>();

beforeAll(async () => {
  dir = await tempDir('proofline-fold-leaves-');
  const input = path.join(dir, 'in');
  await linkQuoteFixtures(input);
  await writeInput(input, 'crafted/ordered.csv', orderedCsv());
  for (const mode of ['once', 'twice'] as const) {
    quoteFoldOptions.joinLeavesOnce = mode === 'once';
    try {
      const config = testConfig(path.join(dir, `data-${mode}`));
      const report = await ingestQuotes(config, input);
      if (report.failed_children) throw new Error(JSON.stringify(report.children));
      runs.set(mode, { report, dataDir: config.dataDir });
    } finally {
      quoteFoldOptions.joinLeavesOnce = true;
    }
  }
}, 300_000);
afterAll(async () => {
  await removeDir(dir);
});

/** The files of a run whose path matches `re`, by their path below the snapshot (base64 of their bytes). */
async function stored(mode: 'once' | 'twice', re = STORED): Promise<Map<string, string>> {
  const root = runs.get(mode)!.dataDir;
  const files = (await readdir(root, { recursive: true })).map((f) => f.split(path.sep).join('/')).filter((f) => re.test(f));
  return new Map(
    await Promise.all(
      files.map(async (f) => [f.replace(/^.*\/snapshots\/[^/]+\//, ''), (await readFile(path.join(root, f))).toString('base64')] as const),
    ),
  );
}

describe('the leaves of a folded file in key order joined once', () => {
  it('is the path the fixtures and the crafted file take (folded, in key order)', () => {
    const details = runs
      .get('once')!
      .report.children.map((c) => ({ key: c.key, ...(c.detail as { folded?: boolean; ordered?: boolean }) }));
    expect(details.find((d) => d.key.endsWith('ordered.csv'))).toMatchObject({ folded: true, ordered: true });
    expect(details.filter((d) => d.folded && d.ordered).length).toBeGreaterThanOrEqual(5);
  });

  it('stores the same bars, parts and leaf keys, byte for byte', async () => {
    const once = await stored('once');
    const twice = await stored('twice');
    expect([...once.keys()].sort()).toEqual([...twice.keys()].sort());
    for (const d of ['quote_bar_folds', 'quote_bar_tails', 'quote_leaf_key_parts', 'tables/quote_bars', 'tables/quote_leaf_keys'])
      expect([d, [...once.keys()].some((k) => k.includes(d))]).toEqual([d, true]);
    for (const [k, v] of once) expect([k, v === twice.get(k)]).toEqual([k, true]);
  });

  it('writes the same chain heads store records', async () => {
    const lines = async (mode: 'once' | 'twice') => {
      const [text] = [...(await stored(mode, /packed\/quote_heads\.tsv$/)).values()];
      return Buffer.from(text!, 'base64').toString('utf8').split('\n').sort();
    };
    const once = await lines('once');
    expect(once.length).toBeGreaterThan(15);
    expect(once).toEqual(await lines('twice'));
  });
});
