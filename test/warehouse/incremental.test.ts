/**
 * The incremental planner (lib/warehouse/incremental.ts) on a few files: unchanged inputs are reused, changed,
 * new and required ones parsed, two paths with the same bytes are reused only together, and a failed child's
 * inputs are left out of the ledger so the next run parses them again. With part reuse (FMCSA): a new file is
 * not hashed at plan, a reused one needs its recorded parts, and the parts are linked into the run.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedChildInputs } from '../../jobs/processors.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { completeLedger, IncrementalPlanner, linkReusedParts, type LedgerEntry } from '../../lib/warehouse/incremental.ts';
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

describe('IncrementalPlanner with part reuse', () => {
  let dir: string;
  let snap: string;
  const f = (name: string) => path.join(dir, 'in', name);

  beforeAll(async () => {
    dir = await tempDir('proofline-incremental-parts-');
    await mkdir(path.join(dir, 'in'), { recursive: true });
    snap = path.join(dir, 'snap');
    await mkdir(path.join(snap, 'parts', 'crashes'), { recursive: true });
    await writeFile(path.join(snap, 'parts', 'crashes', 'crash-a.parquet'), 'part of a');
  });
  afterAll(async () => removeDir(dir));

  it('plans a new file without hashing it; the ledger takes the SHA-256 and parts its child recorded', async () => {
    await writeFile(f('a.csv'), 'A');
    const p = new IncrementalPlanner(path.join(dir, 'in'), 'v1', null, { parts: true, partsDir: path.join(snap, 'parts') });
    await p.partition([f('a.csv')]);
    const st = p.state();
    expect(st.ledger).toEqual([expect.objectContaining({ path: 'a.csv', sha256: '' })]);
    const sha = sha256Hex('A');
    const ledger = await completeLedger(st, [], [{ path: 'a.csv', sha256: sha, bytes: 1, parts: ['crashes/crash-a.parquet'] }]);
    expect(ledger).toEqual([expect.objectContaining({ path: 'a.csv', sha256: sha, parts: ['crashes/crash-a.parquet'] })]);
    // Without a record (its child failed or wrote nothing) the unhashed input is left out: the next run parses it.
    expect(await completeLedger(st, [], [])).toEqual([]);
  });

  it('reuses an unchanged file only while every part its entry lists is in the previous snapshot', async () => {
    const st = await stat(f('a.csv'));
    const prev: LedgerEntry[] = [
      {
        path: 'a.csv',
        sha256: sha256Hex('A'),
        bytes: st.size,
        mtime_ms: Math.floor(st.mtimeMs),
        parser: 'v1',
        parts: ['crashes/crash-a.parquet'],
      },
    ];
    const reuse = new IncrementalPlanner(path.join(dir, 'in'), 'v1', prev, { parts: true, partsDir: path.join(snap, 'parts') });
    await reuse.partition([f('a.csv')]);
    expect(reuse.settle().size).toBe(0);
    expect(reuse.state().reuse_parts).toEqual(['crashes/crash-a.parquet']);
    const gone = new IncrementalPlanner(path.join(dir, 'in'), 'v1', [{ ...prev[0]!, parts: ['crashes/missing.parquet'] }], {
      parts: true,
      partsDir: path.join(snap, 'parts'),
    });
    await gone.partition([f('a.csv')]);
    expect([...gone.settle()]).toEqual([f('a.csv')]);
    const noParts = new IncrementalPlanner(path.join(dir, 'in'), 'v1', [{ ...prev[0]!, parts: undefined }], {
      parts: true,
      partsDir: path.join(snap, 'parts'),
    });
    await noParts.partition([f('a.csv')]);
    expect([...noParts.settle()]).toEqual([f('a.csv')]);
  });

  it('links reused parts into the run and refuses a part name outside a table folder', async () => {
    const run = path.join(dir, 'run');
    await linkReusedParts(snap, run, ['crashes/crash-a.parquet']);
    expect(await readFile(path.join(run, 'parts', 'crashes', 'crash-a.parquet'), 'utf8')).toBe('part of a');
    await expect(linkReusedParts(snap, run, ['../crashes/crash-a.parquet'])).rejects.toThrow(/invalid part/);
    await expect(linkReusedParts(snap, run, ['crashes/sub/x.parquet'])).rejects.toThrow(/invalid part/);
  });
});
