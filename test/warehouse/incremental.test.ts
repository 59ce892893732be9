/**
 * The incremental planner (lib/warehouse/incremental.ts) on a few files: unchanged inputs are reused, changed,
 * new and required ones parsed, two paths with the same bytes are reused only together, and a failed child's
 * inputs are left out of the ledger so the next run parses them again.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedChildInputs } from '../../jobs/processors.ts';
import { completeLedger, IncrementalPlanner, type LedgerEntry } from '../../lib/warehouse/incremental.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

describe('IncrementalPlanner', () => {
  let dir: string;
  const f = (name: string) => path.join(dir, name);
  const write = (name: string, text: string) => writeFile(f(name), text);
  let first: LedgerEntry[];

  beforeAll(async () => {
    dir = await tempDir('proofline-incremental-');
    await mkdir(dir, { recursive: true });
    for (const [n, t] of [
      ['a.json', 'A'],
      ['b.json', 'B'],
      ['c.json', 'same'],
      ['d.json', 'same'],
      ['e.json', 'E'],
    ])
      await write(n, t);
    const p = new IncrementalPlanner(dir, 'v1', null);
    await p.partition(['a.json', 'b.json', 'c.json', 'd.json', 'e.json'].map(f));
    const st = p.state();
    expect(st.counts).toEqual({ parsed: 5, reused: 0, removed: 0 });
    first = st.ledger;
  });
  afterAll(async () => removeDir(dir));

  it('reuses unchanged inputs and parses changed, new and required ones; a removed one is counted', async () => {
    await write('b.json', 'B2');
    await write('n.json', 'N');
    const p = new IncrementalPlanner(dir, 'v1', [...first, { ...first[0]!, path: 'gone.json', sha256: 'f'.repeat(64) }]);
    await p.partition(['a.json', 'b.json', 'c.json', 'd.json', 'e.json', 'n.json'].map(f));
    p.require([f('e.json')]);
    expect([...p.settle()].map((x) => path.basename(x)).sort()).toEqual(['b.json', 'e.json', 'n.json']);
    const st = p.state();
    expect(st.counts).toEqual({ parsed: 3, reused: 3, removed: 1 });
    expect(st.reuse_files).toContain('a.json');
  });

  it('parses both files with the same bytes when one of them changed', async () => {
    await write('d.json', 'different');
    const p = new IncrementalPlanner(dir, 'v1', first);
    await p.partition(['a.json', 'c.json', 'd.json'].map(f));
    expect([...p.settle()].map((x) => path.basename(x)).sort()).toEqual(['c.json', 'd.json']);
  });

  it('re-parses everything under another parser version', async () => {
    const p = new IncrementalPlanner(dir, 'v2', first);
    await p.partition(['a.json', 'c.json'].map(f));
    expect(p.settle().size).toBe(2);
    expect(p.state().reuse_sha256).toEqual([]);
  });

  it("leaves a failed child's inputs out of the ledger", async () => {
    const p = new IncrementalPlanner(dir, 'v1', null);
    await p.partition(['a.json', 'c.json'].map(f));
    const plan = {
      inputDigest: 'x',
      children: [
        { step: 'submissions', key: 'k1', data: { files: [f('a.json')] } },
        { step: 'submissions', key: 'k2', data: { files: [f('c.json')] } },
      ],
    };
    const failed = failedChildInputs(plan, [{ step: 'submissions', key: 'k1', status: 'failed', rows: 0, rejects: 0 }]);
    expect((await completeLedger(p.state(), failed)).map((e) => e.path)).toEqual(['c.json']);
  });
});
