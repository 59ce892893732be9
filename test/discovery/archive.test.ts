/** Archive records: reading with defects, bounded supersedes walks, and the publisher's persisted state. */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CHAIN, readArchive, walkChain, type ArchiveRecord } from '../../lib/discovery/index.ts';
import { readDiscoveryState, statePath, writeDiscoveryState } from '../../service/discovery/archive-state.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const H = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
const rec = (id: string, n: number, supersedes?: string): ArchiveRecord => ({
  versionId: id,
  resource: 'https://s.example/r',
  contentHash: H(n),
  publishedAt: '2026-11-01T00:00:00Z',
  supersedes: supersedes ?? null,
  assertionType: null,
});

describe('readArchive', () => {
  it('resolves relative resources and warns about every defect', () => {
    const warnings: string[] = [];
    const records = readArchive(
      {
        standard: 'archive',
        archive: [
          { versionId: 'a', resource: '/r', contentHash: H(1), publishedAt: '2026-11-01T00:00:00Z' },
          { versionId: 'a', resource: '/r', contentHash: 'md5:x' },
          { versionId: 'c', resource: '/r', contentHash: H(3), publishedAt: 'x', supersedes: 'zz' },
          { resource: '/r' },
          'junk',
        ],
      },
      'https://s.example/.well-known/archive',
      warnings,
    );
    expect(records.map((r) => [r.versionId, r.resource])).toEqual([
      ['a', 'https://s.example/r'],
      ['a', 'https://s.example/r'],
      ['c', 'https://s.example/r'],
    ]);
    expect(warnings.join('\n')).toMatch(/expected "ai-archive"/);
    expect(warnings.join('\n')).toMatch(/versionId a is not unique/);
    expect(warnings.join('\n')).toMatch(/contentHash is not sha256/);
    expect(warnings.join('\n')).toMatch(/supersedes unknown version zz/);
    expect(warnings.join('\n')).toMatch(/record 3 lacks versionId/);
    expect(warnings.join('\n')).not.toMatch(/under "records"/);
    expect(warnings.join('\n')).toMatch(/record 4 is not an object/);
  });

  it('reads the records of spec 002 under "archive", and a legacy "records" member with a warning', () => {
    const rec = { versionId: 'v1', resource: '/ai/feed.json', contentHash: H(1), publishedAt: '2026-11-01T00:00:00Z' };
    const spec: string[] = [];
    expect(readArchive({ standard: 'ai-archive', archive: [rec] }, 'https://s.example/.well-known/archive', spec)).toHaveLength(1);
    expect(spec).toEqual([]);
    const legacy: string[] = [];
    expect(readArchive({ standard: 'ai-archive', records: [rec] }, 'https://s.example/.well-known/archive', legacy)).toHaveLength(1);
    expect(legacy).toEqual(['archive records are under "records", spec 002 puts them under "archive"']);
    const none: string[] = [];
    expect(readArchive({ standard: 'ai-archive' }, 'https://s.example/.well-known/archive', none)).toEqual([]);
    expect(none).toEqual(['archive has no "archive" array of records']);
  });
});

describe('walkChain', () => {
  it('reaches, ends, detects cycles and missing links', () => {
    const chain = [rec('v1', 1), rec('v2', 2, 'v1'), rec('v3', 3, 'v2')];
    expect(walkChain(chain, chain[2], (r) => r.contentHash === H(1))).toEqual({ outcome: 'reached', path: ['v3', 'v2', 'v1'] });
    expect(walkChain(chain, chain[2], () => false)).toEqual({ outcome: 'end', path: ['v3', 'v2', 'v1'] });
    const cyc = [rec('x', 1, 'y'), rec('y', 2, 'x')];
    expect(walkChain(cyc, cyc[0], () => false).outcome).toBe('cycle');
    expect(walkChain([rec('m', 1, 'gone')], rec('m', 1, 'gone'), () => false)).toEqual({ outcome: 'missing-link', path: ['m', 'gone'] });
  });

  it('gives up after MAX_CHAIN steps', () => {
    const long = Array.from({ length: MAX_CHAIN + 10 }, (_, i) => rec(`v${i}`, i, i ? `v${i - 1}` : undefined));
    expect(walkChain(long, long.at(-1)!, () => false).outcome).toBe('too-long');
  });
});

describe('readDiscoveryState', () => {
  it('round-trips, and moves an unreadable file aside instead of failing', async () => {
    const dir = await tempDir('proofline-discovery-state-');
    try {
      expect((await readDiscoveryState(dir)).records).toEqual([]);
      await writeDiscoveryState(dir, {
        version: 1,
        resources: {},
        records: [
          { versionId: 'v', resource: '/x', contentHash: H(1), publishedAt: 't', signedAt: 't', assertionType: 'legal', summary: 's' },
        ],
        releases: { '1': 't' },
      });
      expect((await readDiscoveryState(dir)).records).toHaveLength(1);
      await mkdir(path.dirname(statePath(dir)), { recursive: true });
      await writeFile(statePath(dir), '{"version":1,"resour');
      let moved = '';
      const fresh = await readDiscoveryState(dir, (to) => (moved = to));
      expect(fresh.records).toEqual([]);
      expect(path.basename(moved)).toMatch(/^discovery-archive\.json\.corrupt-\d+$/);
      expect(await readdir(path.dirname(moved))).toContain(path.basename(moved));
    } finally {
      await removeDir(dir);
    }
  });
});
