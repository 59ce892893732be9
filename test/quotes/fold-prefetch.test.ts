/**
 * A child reads the next batch's record texts while it folds the current one (`quoteFoldOptions.prefetch`,
 * jobs/quotes/quotes-fold.ts, issue 22 item 3) and appends the leaves once every batch is folded. This ingests the same
 * inputs in batches of a few chains with and without the read-ahead, and with the default batches, and compares every
 * stored file of the bars and their parts byte for byte (bars, lines, tails, chains and leaf-key parts, `quote_bars`,
 * `quote_leaf_keys`, `quote_bar_inputs`, `quote_leaf_history`) and the chain heads store's records (its line order is not
 * fixed: test/quotes/fold-leaves-join.test.ts).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteFoldOptions } from '../../jobs/quotes/quotes-fold.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import {
  foldDetails,
  type IngestRun,
  ingestEachMode,
  linkQuoteFixtures,
  orderedSdkCsv,
  storedFiles,
  writeInput,
} from './quotes-fixture.ts';

/** The same bars with two tickers' rows swapped: a file out of key order (its batches read with ORDER BY). */
function unorderedSdkCsv(): string {
  const [header, ...rows] = orderedSdkCsv().trim().split('\n');
  return `${[header, ...rows.slice(140, 210), ...rows.slice(0, 140), ...rows.slice(210)].join('\n').replace(/T0/g, 'U0')}\n`;
}

const MODES = ['prefetch', 'serial', 'default'] as const;
type Mode = (typeof MODES)[number];
let dir: string;
let runs: Map<Mode, IngestRun>;

beforeAll(async () => {
  dir = await tempDir('proofline-fold-prefetch-');
  const input = path.join(dir, 'in');
  await linkQuoteFixtures(input);
  await writeInput(input, 'crafted/ordered.csv', orderedSdkCsv());
  await writeInput(input, 'crafted/unordered.csv', unorderedSdkCsv());
  runs = await ingestEachMode(
    dir,
    input,
    MODES,
    (mode) => {
      quoteFoldOptions.prefetch = mode !== 'serial';
      if (mode !== 'default') quoteFoldOptions.batchRows = 150;
    },
    () => {
      quoteFoldOptions.prefetch = true;
      quoteFoldOptions.batchRows = 65_536;
    },
  );
}, 300_000);
afterAll(async () => {
  await removeDir(dir);
});

/** The stored files of a run whose path matches `re` (quotes-fixture.ts storedFiles). */
const stored = (mode: Mode, re?: RegExp) => storedFiles(runs.get(mode)!.dataDir, re);

describe('the record texts of the next batch read while a batch is folded', () => {
  it('folds the crafted files, in key order and not', () => {
    const details = foldDetails(runs.get('prefetch')!);
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
