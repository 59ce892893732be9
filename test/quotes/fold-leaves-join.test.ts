/**
 * A folded file in key order takes each chain's first row, day count and leaves from `quote_file_leaves` in one join
 * (jobs/quotes/quotes-fold.ts, issue 22 item 3); before, the bars and tails parts joined an aggregate over every row
 * for the first rows and day counts and then the leaves in a second join. This ingests the same inputs both ways
 * (`quoteFoldOptions.joinLeavesOnce`) and compares every stored file of the bars and their parts byte for byte (bars,
 * lines, tails, chains and leaf-key parts, `quote_bars`, `quote_leaf_keys`, `quote_bar_inputs`, `quote_leaf_history`)
 * and the chain heads store line for line: the store's line order is not fixed (two ingests of the same inputs by the
 * same code can write its records in another order, each at the offset its index gives), its records are.
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

let dir: string;
let runs: Map<'once' | 'twice', IngestRun>;

beforeAll(async () => {
  dir = await tempDir('proofline-fold-leaves-');
  const input = path.join(dir, 'in');
  await linkQuoteFixtures(input);
  await writeInput(input, 'crafted/ordered.csv', orderedSdkCsv());
  runs = await ingestEachMode(
    dir,
    input,
    ['once', 'twice'] as const,
    (mode) => {
      quoteFoldOptions.joinLeavesOnce = mode === 'once';
    },
    () => {
      quoteFoldOptions.joinLeavesOnce = true;
    },
  );
}, 300_000);
afterAll(async () => {
  await removeDir(dir);
});

/** The stored files of a run whose path matches `re` (quotes-fixture.ts storedFiles). */
const stored = (mode: 'once' | 'twice', re?: RegExp) => storedFiles(runs.get(mode)!.dataDir, re);

describe('the leaves of a folded file in key order joined once', () => {
  it('is the path the fixtures and the crafted file take (folded, in key order)', () => {
    const details = foldDetails(runs.get('once')!);
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
