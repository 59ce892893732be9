import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSourceLeaf } from '../../lib/origin.ts';
import { sha256Hex } from '../../lib/hash.ts';
import { acquireWriterLock } from '../../lib/warehouse/lock.ts';
import { writerLockPath, snapshotDir } from '../../lib/warehouse/layout.ts';
import { publishRun } from '../../lib/warehouse/publish.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { listSnapshots, readCurrentManifest, readCurrentPointer } from '../../lib/warehouse/snapshot.ts';
import { StagingRun } from '../../lib/warehouse/staging.ts';
import { openWarehouseViews } from '../../lib/warehouse/views.ts';
import type { DomainSpec } from '../../lib/warehouse/domain.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const spec: DomainSpec = {
  domain: 'demo',
  tablesSql: `CREATE TABLE IF NOT EXISTS items (id INTEGER NOT NULL, name VARCHAR, d DATE, tags VARCHAR[], big BIGINT);
              CREATE TABLE IF NOT EXISTS notes (id INTEGER, body VARCHAR);`,
  indexesSql: `CREATE INDEX IF NOT EXISTS items_id_idx ON items (id);`,
};
const src = { source: 'demo/file', source_url: null, retrieved_at: null, content_sha256: 'c'.repeat(64), byte_size: 1, path: '/in/file' };

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await removeDir(dir);
});

async function publish(runId: string, items: object[], notes?: object[]) {
  const run = await StagingRun.open(dir, spec, runId);
  await run.writeRows('items', 'a', items);
  if (notes) await run.writeRows('notes', 'n', notes);
  await run.recordSource({ ...src, content_sha256: sha256Hex(runId) });
  return publishRun(run, { keep: 2, inputDigest: runId });
}

describe('publishRun', () => {
  it('publishes typed rows, hashes every table file and switches CURRENT', async () => {
    const r = await publish(
      'run-1',
      [{ id: 1, name: 'a', d: '2024-01-02', tags: ['x'], big: 9007199254740993n }, { id: 2 }],
      [{ id: 1, body: 'n' }],
    );
    const ptr = await readCurrentPointer(dir, 'demo');
    expect(ptr?.snapshot_id).toBe(r.manifest.snapshot_id);
    expect(r.manifest.tables.items.rows).toBe(2);
    const file = path.join(r.dir, 'tables', 'items.parquet');
    expect(sha256Hex(await readFile(file))).toBe(r.manifest.tables.items.sha256);
    expect(r.manifest.tables.sources.rows).toBe(1);
    expect(r.manifest.tables.origin_leaves.rows).toBe(1);
  });

  it('serves the snapshot read-only with BIGINT as strings and integer-bound ids', async () => {
    const reader = await SnapshotReader.open(dir, 'demo');
    expect(await reader.query('SELECT id, name, d, tags, big FROM items WHERE id = $id', { id: 1 })).toEqual([
      { id: 1, name: 'a', d: '2024-01-02', tags: ['x'], big: '9007199254740993' },
    ]);
    await reader.close();
  });

  it('carries forward tables a run does not write, accumulates sources and leaves, and replaces the rest', async () => {
    await publish('run-2', [{ id: 3, name: 'c' }]);
    const m = (await readCurrentManifest(dir, 'demo'))!;
    expect(m.tables.items.rows).toBe(1);
    expect(m.tables.notes.rows).toBe(1);
    expect(m.tables.sources.rows).toBe(2);
    expect(m.tables.origin_leaves.rows).toBe(2);
  });

  it('deduplicates origin leaves by hash across runs', async () => {
    const run = await StagingRun.open(dir, spec, 'run-3');
    await run.writeLeaves('x', [createSourceLeaf(src), createSourceLeaf(src)]);
    await publishRun(run, { keep: 2 });
    const m = (await readCurrentManifest(dir, 'demo'))!;
    expect(m.tables.origin_leaves.rows).toBe(3);
  });

  it('prunes old snapshots keeping the newest few', async () => {
    expect(await listSnapshots(dir, 'demo')).toHaveLength(2);
  });

  it('lets a reader swap to a new snapshot without restart and notifies listeners', async () => {
    const reader = await SnapshotReader.open(dir, 'demo');
    const seen: string[] = [];
    reader.onSwap((m) => seen.push(m.snapshot_id));
    const before = reader.manifest!.snapshot_id;
    const r = await publish('run-4', [{ id: 7, name: 'new' }]);
    expect(await reader.refresh()).toBe(true);
    expect(reader.manifest!.snapshot_id).not.toBe(before);
    expect(seen).toEqual([r.manifest.snapshot_id]);
    expect(await reader.query('SELECT name FROM items')).toEqual([{ name: 'new' }]);
    await reader.close();
  });

  it('runs before-swap hooks on the new snapshot while every other caller still reads the old one', async () => {
    const reader = await SnapshotReader.open(dir, 'demo');
    const before = reader.manifest!.snapshot_id;
    const inHook: unknown[] = [];
    const outside: unknown[] = [];
    // A client request: started outside the hook's async scope, it reads while the hook runs.
    let hookRunning!: () => void;
    const running = new Promise<void>((resolve) => (hookRunning = resolve));
    const client = (async () => {
      await running;
      outside.push(reader.manifest!.snapshot_id, await reader.query('SELECT name FROM items'));
    })();
    reader.beforeSwap(async (manifest) => {
      inHook.push(manifest.snapshot_id, reader.manifest!.snapshot_id, await reader.query('SELECT name FROM items'));
      hookRunning();
      await client; // the swap waits for the hook, so the client is served the old snapshot
    });
    const r = await publish('run-5', [{ id: 8, name: 'staged' }]);
    expect(await reader.refresh()).toBe(true);
    expect(inHook).toEqual([r.manifest.snapshot_id, r.manifest.snapshot_id, [{ name: 'staged' }]]);
    expect(outside).toEqual([before, [{ name: 'new' }]]);
    expect(reader.manifest!.snapshot_id).toBe(r.manifest.snapshot_id);
    await reader.close();
  });

  it('swaps even when a before-swap hook fails, and never serves a snapshot staged while the reader closed', async () => {
    const warned: string[] = [];
    const log = { warn: ((_o: object, msg: string) => void warned.push(msg)) as never };
    const reader = await SnapshotReader.open(dir, 'demo', { log });
    reader.beforeSwap(async () => {
      throw new Error('warm-up broke');
    });
    const r = await publish('run-6', [{ id: 9, name: 'after-failure' }]);
    expect(await reader.refresh()).toBe(true);
    expect(reader.manifest!.snapshot_id).toBe(r.manifest.snapshot_id);
    expect(warned).toEqual(['before-swap hook failed; swapping anyway']);
    await reader.close();

    const closing = await SnapshotReader.open(dir, 'demo');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const hookEntered = new Promise<void>((resolve) => (entered = resolve));
    closing.beforeSwap(async () => {
      entered();
      await held;
    });
    await publish('run-7', [{ id: 10, name: 'never-served' }]);
    const swapped = closing.refresh();
    await hookEntered;
    await closing.close();
    release();
    expect(await swapped).toBe(false);
    expect(closing.manifest).toBeNull();
  });

  it('exposes every current table to ad-hoc SQL as domain.table views', async () => {
    const { conn, tables } = await openWarehouseViews(dir);
    expect(tables).toContain('demo.items');
    const rows = (await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM demo.items')).getRowObjectsJson();
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('rejects a part whose rows do not fit the column types, naming the table', async () => {
    const run = await StagingRun.open(dir, spec, 'run-bad');
    await expect(run.writeRows('items', 'x', [{ id: 'not a number' }])).rejects.toThrow();
    await expect(run.writeRows('nope', 'x', [{}])).rejects.toThrow(/not defined/);
    await run.discard();
  });
});

describe('acquireWriterLock', () => {
  it('takes over a lock whose owner process is dead', async () => {
    await mkdir(path.dirname(writerLockPath(dir, 'demo')), { recursive: true });
    await writeFile(
      writerLockPath(dir, 'demo'),
      JSON.stringify({ host: (await import('node:os')).hostname(), pid: 2 ** 22 + 12345, acquired_at: '', run_id: 'dead' }),
    );
    const release = await acquireWriterLock(dir, 'demo', 'me', 2000);
    await release();
  });
  it('waits for a live holder and times out with a message naming it', async () => {
    const release = await acquireWriterLock(dir, 'demo', 'holder', 1000);
    await expect(acquireWriterLock(dir, 'demo', 'other', 300)).rejects.toThrow(/locked by .* \(run holder\)/);
    await release();
  });
});

describe('snapshot layout', () => {
  it('keeps each snapshot self-contained (manifest, parquet, serving db)', async () => {
    const m = (await readCurrentManifest(dir, 'demo'))!;
    const d = snapshotDir(dir, 'demo', m.snapshot_id);
    for (const t of Object.keys(m.tables)) await expect(readFile(path.join(d, 'tables', `${t}.parquet`))).resolves.toBeTruthy();
    await expect(readFile(path.join(d, 'serving.duckdb'))).resolves.toBeTruthy();
  });
});
