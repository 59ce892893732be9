import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { hashCanonical, sha256Hex } from '../../lib/hash.ts';
import { defineDomain, type DomainSpec } from '../../lib/warehouse/domain.ts';
import { quoteLiteral } from '../../lib/warehouse/duckdb.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import { publishRun, type PublishOptions } from '../../lib/warehouse/publish.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest, readCurrentPointer } from '../../lib/warehouse/snapshot.ts';
import { StagingRun } from '../../lib/warehouse/staging.ts';
import { openWarehouseViews } from '../../lib/warehouse/views.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

/** events: parquet-only (its parts are the table files); totals: a serving table derived from it. */
const spec: DomainSpec = {
  domain: 'pq',
  tablesSql: `CREATE TABLE IF NOT EXISTS events (dot INTEGER NOT NULL, kind VARCHAR, n BIGINT);
              CREATE TABLE IF NOT EXISTS totals (dot INTEGER, n BIGINT);`,
  indexesSql: `CREATE UNIQUE INDEX IF NOT EXISTS totals_dot_idx ON totals (dot);`,
  replaceTables: ['events', 'totals'],
  parquetTables: ['events'],
};
const src = { source: 'pq/file', source_url: null, retrieved_at: null, content_sha256: 'd'.repeat(64), byte_size: 1, path: '/in/file' };

const derive: PublishOptions['derive'] = async (conn, ctx) => {
  expect(ctx.parquetTables.has('events')).toBe(true);
  await conn.run(`CREATE OR REPLACE TABLE totals AS SELECT dot, sum(n)::BIGINT AS n FROM events GROUP BY dot`);
  await ctx.writePacked('totals_json', `SELECT dot, json_object('dot', dot, 'n', n)::VARCHAR FROM totals`);
};

let dir: string;
beforeAll(async () => {
  dir = await tempDir('proofline-pq-');
});
afterAll(async () => {
  await removeDir(dir);
});

/** A run with the given parts of `events`; `raw` parts are written by DuckDB in a column order that is not the DDL's. */
async function stage(runId: string, parts: Array<{ key: string; rows: Array<{ dot: number; kind: string; n: number }>; raw?: boolean }>) {
  const run = await StagingRun.open(dir, spec, runId);
  for (const p of parts) {
    if (!p.raw) {
      await run.writeRows('events', p.key, p.rows);
      continue;
    }
    const values = p.rows.map((r) => `(${r.n}, ${quoteLiteral(r.kind)}, ${r.dot})`).join(', ');
    const target = run.partPath('events', p.key);
    await run.withScratch((conn) =>
      conn.run(
        `COPY (SELECT n::INTEGER AS n, kind, dot::BIGINT AS dot FROM (VALUES ${values}) t(n, kind, dot)) TO ${quoteLiteral(target)} (FORMAT parquet)`,
      ),
    );
  }
  await run.recordSource({ ...src, content_sha256: sha256Hex(runId) });
  return run;
}

async function servingTables(snapshot: string): Promise<string[]> {
  const db = await DuckDBInstance.create(path.join(snapshot, 'serving.duckdb'), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    return (
      await conn.runAndReadAll(`SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() ORDER BY 1`)
    )
      .getRows()
      .map((r) => String(r[0]));
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

describe('publishRun with parquet-only tables', () => {
  it('refuses a common table as parquet-only', () => {
    expect(() =>
      defineDomain({ domain: 'x', tables: './parquet-tables.test.ts', base: import.meta.url, parquetTables: ['sources'] }),
    ).toThrow(/common tables/);
  });

  it('makes a single conforming part the table file itself, keeps it out of serving.duckdb and hashes it', async () => {
    const run = await stage('run-1', [
      {
        key: 'a',
        rows: [
          { dot: 2, kind: 'x', n: 5 },
          { dot: 1, kind: 'y', n: 7 },
          { dot: 2, kind: 'z', n: 1 },
        ],
      },
    ]);
    const part = run.partPath('events', 'a');
    const partInode = (await stat(part)).ino;
    const r = await publishRun(run, { keep: 3, inputDigest: 'run-1', derive });
    const file = path.join(r.dir, 'tables', 'events.parquet');
    expect((await stat(file)).ino).toBe(partInode); // hard link: the part was not rewritten
    expect(r.manifest.tables.events).toMatchObject({ rows: 3, storage: 'parquet', sha256: sha256Hex(await readFile(file)) });
    expect(r.manifest.tables.events.files).toBeUndefined();
    expect(r.manifest.tables.totals.storage).toBeUndefined();
    expect(r.manifest.packed).toEqual({
      totals_json: { records: 2, bytes: expect.any(Number) },
      origin_leaves: { records: expect.any(Number), bytes: expect.any(Number) },
    });
    expect(await servingTables(r.dir)).not.toContain('events');
    expect(await servingTables(r.dir)).toContain('totals');
    await expect(stat(path.join(r.dir, 'parts'))).rejects.toThrow(); // parts removed after the switch
  });

  it('serves parquet-only tables through views in the reader (renamed snapshot directory) and in the sql CLI views', async () => {
    const reader = await SnapshotReader.open(dir, 'pq', { poolSize: 2 });
    try {
      expect(await reader.query('SELECT dot, n FROM events WHERE dot = $dot ORDER BY n', { dot: 2 })).toEqual([
        { dot: 2, n: '1' },
        { dot: 2, n: '5' },
      ]);
      expect(
        await reader.query('SELECT e.kind, t.n AS total FROM events e JOIN totals t USING (dot) WHERE dot = $dot', { dot: 1 }),
      ).toEqual([{ kind: 'y', total: '7' }]);
      // Every pooled connection has the view (queries run concurrently on both).
      const counts = await Promise.all([1, 2, 3, 4].map(() => reader.query('SELECT count(*)::INTEGER AS c FROM events')));
      expect(counts.map((c) => c[0].c)).toEqual([3, 3, 3, 3]);
    } finally {
      await reader.close();
    }
    const { conn, tables } = await openWarehouseViews(dir);
    expect(tables).toEqual(expect.arrayContaining(['pq.events', 'pq.totals']));
    expect((await conn.runAndReadAll('SELECT count(*)::INTEGER AS c FROM pq.events')).getRowObjectsJson()).toEqual([{ c: 3 }]);
    conn.closeSync();
  });

  it('publishes several parts as a directory, rewriting only the part whose columns differ from the DDL', async () => {
    const run = await stage('run-2', [
      { key: 'a', rows: [{ dot: 1, kind: 'a', n: 1 }] },
      {
        key: 'b',
        rows: [
          { dot: 3, kind: 'b', n: 2 },
          { dot: 4, kind: 'c', n: 3 },
        ],
        raw: true,
      },
    ]);
    const r = await publishRun(run, { keep: 3, inputDigest: 'run-2', derive });
    const tm = r.manifest.tables.events;
    expect(tm.files && Object.keys(tm.files).sort()).toEqual(['a.parquet', 'b.parquet']);
    const hashes: Record<string, string> = {};
    for (const f of Object.keys(tm.files!)) {
      hashes[f] = sha256Hex(await readFile(path.join(r.dir, 'tables', 'events', f)));
      expect(tm.files![f].sha256).toBe(hashes[f]);
    }
    expect(tm.sha256).toBe(hashCanonical(hashes));
    expect(tm.rows).toBe(3);
    const reader = await SnapshotReader.open(dir, 'pq', { poolSize: 1 });
    try {
      // The rewritten part has the DDL's types and order (dot INTEGER, n BIGINT → string).
      expect(await reader.query('SELECT * FROM events ORDER BY dot')).toEqual([
        { dot: 1, kind: 'a', n: '1' },
        { dot: 3, kind: 'b', n: '2' },
        { dot: 4, kind: 'c', n: '3' },
      ]);
    } finally {
      await reader.close();
    }
  });

  it('leaves the previous snapshot current when publish crashes before the CURRENT switch, and the run can be published again', async () => {
    const before = (await readCurrentPointer(dir, 'pq'))!;
    const beforeManifest = (await readCurrentManifest(dir, 'pq'))!;
    const run = await stage('run-3', [{ key: 'a', rows: [{ dot: 9, kind: 'q', n: 9 }] }]);
    await expect(
      publishRun(run, {
        keep: 3,
        inputDigest: 'run-3',
        derive,
        onStep: (s) => {
          if (s === 'indexed') throw new Error('crash');
        },
      }),
    ).rejects.toThrow('crash');
    expect(await readCurrentPointer(dir, 'pq')).toEqual(before);
    const reader = await SnapshotReader.open(dir, 'pq', { poolSize: 1 });
    try {
      expect(await reader.query('SELECT count(*)::INTEGER AS c FROM events')).toEqual([{ c: 3 }]);
      // The old snapshot's files are untouched.
      const oldFile = path.join(snapshotDir(dir, 'pq', before.snapshot_id), 'tables', 'events', 'a.parquet');
      expect(sha256Hex(await readFile(oldFile))).toBe(beforeManifest.tables.events.files!['a.parquet'].sha256);
      // Retry: the parts are still there (hard-linked, never moved), so the same run publishes.
      const again = await publishRun(await StagingRun.open(dir, spec, 'run-3'), { keep: 3, inputDigest: 'run-3', derive });
      expect(again.manifest.tables.events.rows).toBe(1);
      expect(await reader.refresh()).toBe(true);
      expect(await reader.query('SELECT dot FROM events')).toEqual([{ dot: 9 }]);
    } finally {
      await reader.close();
    }
  });

  it('lets derive replace a parquet-only table (one new file, projected to the DDL)', async () => {
    const run = await stage('run-4', [
      {
        key: 'a',
        rows: [
          { dot: 5, kind: 'dup', n: 1 },
          { dot: 5, kind: 'dup', n: 2 },
          { dot: 6, kind: 'one', n: 3 },
        ],
      },
    ]);
    const r = await publishRun(run, {
      keep: 3,
      inputDigest: 'run-4',
      derive: async (conn, ctx) => {
        await ctx.replaceParquetTable('events', `SELECT * FROM events QUALIFY row_number() OVER (PARTITION BY dot ORDER BY n DESC) = 1`);
        await derive!(conn, ctx);
      },
    });
    expect(r.manifest.tables.events).toMatchObject({ rows: 2, storage: 'parquet' });
    expect(r.manifest.tables.totals.rows).toBe(2);
    const file = path.join(r.dir, 'tables', 'events.parquet');
    expect(r.manifest.tables.events.sha256).toBe(sha256Hex(await readFile(file)));
  });
});
