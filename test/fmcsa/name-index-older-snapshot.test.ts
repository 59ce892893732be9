/**
 * A snapshot published before the phrase search (its name index without the `tail` column, and without the
 * carrier_name_sets store, which came later) still answers every name: words through the index, phrases through the
 * scan of every name, both equal to the scan (carriers.queries.ts nameIndexQuery reads the snapshot's columns before
 * it picks search-carriers-by-phrase.sql). The snapshot's schema is reported without `tail` and its sets store as
 * absent; the tables themselves are the current ones.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { searchCarriers } from '../../service/carriers/carriers.queries.ts';
import { buildTestService, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

vi.mock('../../lib/warehouse/snapshot-schema.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/warehouse/snapshot-schema.ts')>();
  return {
    ...real,
    snapshotSchema: async (reader: SnapshotReader) => {
      const schema = await real.snapshotSchema(reader);
      const older = new Map([...schema].map(([t, cols]) => [t, new Set(cols)]));
      older.get('carrier_name_terms')?.delete('tail');
      return older;
    },
  };
});

const scanSql = loadSql('../../service/carriers/search-carriers.sql', import.meta.url);

describe('carrier search on a snapshot whose name index has no tails', () => {
  let root: string;
  let svc: TestService;
  let fmcsa: SnapshotReader;
  beforeAll(async () => {
    root = await tempDir('fmcsa-old-idx-');
    const config = await ingestSmallFmcsa(root, path.join(root, 'data'), {}, 1500);
    svc = await buildTestService(config, ['fmcsa']);
    fmcsa = svc.deps.readers.fmcsa!;
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  it('answers a phrase by the scan and a word by the index, each as the scan does', async () => {
    const [{ legal_name }] = await fmcsa.query(
      `SELECT legal_name FROM carriers WHERE legal_name LIKE '% %' ORDER BY hash(dot_number) LIMIT 1`,
    );
    const words = String(legal_name).toLowerCase().split(' ');
    const packed = fmcsa.packed.bind(fmcsa);
    const older = vi.spyOn(fmcsa, 'packed').mockImplementation((name) => (name === 'carrier_name_sets' ? null : packed(name)));
    const spy = vi.spyOn(fmcsa, 'query');
    try {
      for (const [name, viaScan] of [
        [words.slice(0, 2).join(' '), true],
        [words[0]!.slice(0, 3), false],
      ] as const) {
        spy.mockClear();
        const got = await searchCarriers(fmcsa, { name });
        const texts = spy.mock.calls.map(([text]) => String(text));
        expect(
          texts.some((t) => /FROM carriers c\b/.test(t)),
          name,
        ).toBe(viaScan);
        expect(
          texts.some((t) => /\btail\b/.test(t)),
          name,
        ).toBe(false);
        const rows = await fmcsa.query(scanSql, { dot: null, mc: null, name, state: null, limit: 20, offset: 0 });
        expect(got.total, name).toBe(rows.length ? Number(rows[0].total) : 0);
        expect(JSON.stringify(got.results), name).toBe(JSON.stringify(rows.map(({ total: _t, rank: _r, ...r }) => r)));
        expect(got.total, name).toBeGreaterThan(0);
      }
    } finally {
      spy.mockRestore();
      older.mockRestore();
    }
  });
});
