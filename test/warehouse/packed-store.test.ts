import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { DomainSpec } from '../../lib/warehouse/domain.ts';
import { PackedStore, writePackedStore, writePackedStoreDelta } from '../../lib/warehouse/packed-store.ts';
import { publishRun } from '../../lib/warehouse/publish.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { StagingRun } from '../../lib/warehouse/staging.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

let dir: string;
let db: DuckDBInstance;
let conn: DuckDBConnection;
beforeAll(async () => {
  dir = await tempDir('proofline-packed-');
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  await conn.run('SET preserve_insertion_order = false');
  // Keys out of order, values with quotes, commas, tabs, newlines and non-ASCII (JSON escapes the control characters).
  await conn.run(`CREATE TABLE r AS SELECT * FROM (VALUES
    (70, 'last "one", ok', 1.5), (3, E'first\ttab\nline é ✓', NULL), (41, NULL, 3e20), (12, 'middle', -2.25)) t(k, s, d)`);
});
afterAll(async () => {
  conn.closeSync();
  db.closeSync();
  await removeDir(dir);
});

describe('writePackedStore and PackedStore', () => {
  it('a delta write equals a full write: changed keys replaced, removed keys gone, new keys added, the rest copied', async () => {
    const base = path.join(dir, 'delta-base');
    const next = path.join(dir, 'delta-next');
    const full = path.join(dir, 'delta-full');
    for (const d of [base, next, full]) await mkdir(d, { recursive: true });
    await conn.run(`CREATE OR REPLACE TABLE dv AS SELECT i AS k, 'v' || i || repeat('x', i % 7) AS v FROM range(-50, 3000) t(i)`);
    await writePackedStore(conn, 'SELECT k, v FROM dv', base, 's');
    // The next night: key 7 changed, 8 removed, 5000 added; and -50 (the first) and 2999 (the last) changed.
    await conn.run(`UPDATE dv SET v = 'changed ' || k WHERE k IN (7, -50, 2999)`);
    await conn.run('DELETE FROM dv WHERE k = 8');
    await conn.run(`INSERT INTO dv VALUES (5000, 'new')`);
    const changed = new Set([7, 8, 5000, -50, 2999]);
    async function* batches() {
      // In two batches, as registry-packed.ts writes them.
      yield 'SELECT k, v FROM dv WHERE k IN (7, 8, -50)';
      yield 'SELECT k, v FROM dv WHERE k IN (5000, 2999)';
    }
    const info = await writePackedStoreDelta(conn, batches(), next, 's', base, changed);
    await writePackedStore(conn, 'SELECT k, v FROM dv', full, 's');
    const [a, b] = [await PackedStore.open(next, 's'), await PackedStore.open(full, 's')];
    try {
      expect(info.records).toBe(b.size);
      expect([...a.allKeys()]).toEqual([...b.allKeys()]);
      for (const k of b.allKeys()) expect(await a.get(k), `key ${k}`).toBe(await b.get(k));
      expect(await a.get(8)).toBeNull();
      expect(await a.get(7)).toBe('changed 7');
      expect(await a.get(5000)).toBe('new');
    } finally {
      await a.close();
      await b.close();
    }
    // A record for a key not named as changed would shadow the previous one: refused as a duplicate key.
    const dup = path.join(dir, 'delta-dup');
    await mkdir(dup, { recursive: true });
    await expect(writePackedStoreDelta(conn, 'SELECT k, v FROM dv WHERE k = 9', dup, 's', base, new Set())).rejects.toThrow(/unique/);
  });

  it('reads values of every size, small and past the shared read buffer, interleaved across stores, each exactly as written', async () => {
    const sizes = path.join(dir, 'sizes');
    const other = path.join(dir, 'sizes-other');
    for (const d of [sizes, other]) await mkdir(d, { recursive: true });
    // 1 byte to 1.5 MB (the shared buffer starts at 64 KB, grows to 1 MB, and a longer value gets its own), non-ASCII
    // text at the edges so a decode past a value's end or of another value's bytes would show.
    const lengths = [1, 100, 4095, 4097, 65_535, 65_536, 65_537, 300_000, 1_048_576, 1_048_577, 1_500_000, 10];
    await conn.run(
      `CREATE OR REPLACE TABLE sz AS SELECT i AS k, 'é' || repeat(chr((97 + i % 26)::INTEGER), len) || '✓' AS v FROM unnest($1::INTEGER[]) WITH ORDINALITY t(len, i)`.replace(
        '$1',
        `[${lengths.join(',')}]`,
      ),
    );
    await conn.run(`CREATE OR REPLACE TABLE sz2 AS SELECT k, upper(v) AS v FROM sz`);
    await writePackedStore(conn, 'SELECT k, v FROM sz', sizes, 's');
    await writePackedStore(conn, 'SELECT k, v FROM sz2', other, 's');
    const [a, b] = [await PackedStore.open(sizes, 's'), await PackedStore.open(other, 's')];
    try {
      const want = (i: number, upper: boolean) => {
        const v = `é${String.fromCharCode(97 + (i % 26)).repeat(lengths[i - 1]!)}✓`;
        return upper ? v.toUpperCase() : v;
      };
      // Smallest first (the shared buffer grows step by step), then largest first (short values read into a buffer
      // holding a longer one), each key from both stores: an earlier value stays what it was.
      const ascending = [...lengths.keys()].map((i) => i + 1).sort((x, y) => lengths[x - 1]! - lengths[y - 1]!);
      const seen: Array<[string, string]> = [];
      for (const i of [...ascending, ...[...ascending].reverse()]) {
        const [va, vb] = [a.read(i), await b.get(i)];
        expect(va?.length, `key ${i}`).toBe(lengths[i - 1]! + 2);
        expect(va === want(i, false) && vb === want(i, true), `key ${i}`).toBe(true);
        seen.push([va!, want(i, false)]);
      }
      for (const [got, w] of seen) expect(got === w).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('writes batches as one store: the first straight from DuckDB, the others appended (an empty one and none at all included)', async () => {
    const one = path.join(dir, 'batches-one');
    const many = path.join(dir, 'batches-many');
    const none = path.join(dir, 'batches-none');
    for (const d of [one, many, none]) await mkdir(d, { recursive: true });
    await conn.run(`CREATE OR REPLACE TABLE bv AS SELECT i AS k, 'v' || i || repeat('y', i % 5) AS v FROM range(0, 5000) t(i)`);
    await writePackedStore(conn, 'SELECT k, v FROM bv', one, 's');
    const info = await writePackedStore(
      conn,
      ['SELECT k, v FROM bv WHERE k < 3000', 'SELECT k, v FROM bv WHERE k < 0', 'SELECT k, v FROM bv WHERE k >= 3000'],
      many,
      's',
    );
    expect(info.records).toBe(5000);
    expect((await writePackedStore(conn, [], none, 's')).records).toBe(0);
    expect(await readFile(path.join(many, 's.tsv'))).toHaveLength((await readFile(path.join(one, 's.tsv'))).length);
    const [a, b] = [await PackedStore.open(many, 's'), await PackedStore.open(one, 's')];
    try {
      expect([...a.allKeys()]).toEqual([...b.allKeys()]);
      for (const k of b.allKeys()) expect(await a.get(k), `key ${k}`).toBe(await b.get(k));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('finds the first and the last key, misses absent keys, and returns exactly the JSON text DuckDB produced', async () => {
    const sql = `SELECT k, json_array(k, s, d)::VARCHAR FROM r`;
    const info = await writePackedStore(conn, sql, dir, 'rows');
    expect(info.records).toBe(4);
    // The data file keeps DuckDB's order; the index is sorted by key.
    expect(info.bytes).toBe((await readFile(path.join(dir, 'rows.tsv'))).length);
    const store = await PackedStore.open(dir, 'rows');
    try {
      const expected = new Map(
        (await conn.runAndReadAll(`SELECT k, json_array(k, s, d)::VARCHAR AS v FROM r`))
          .getRows()
          .map((row) => [Number(row[0]), String(row[1])]),
      );
      expect(store.size).toBe(4);
      expect(await store.get(3)).toBe(expected.get(3)); // first
      expect(await store.get(70)).toBe(expected.get(70)); // last
      expect(await store.get(41)).toBe(expected.get(41));
      expect(JSON.parse((await store.get(3))!)).toEqual([3, 'first\ttab\nline é ✓', null]);
      for (const missing of [0, 2, 4, 13, 71, 2 ** 31 - 1, -1, 1.5, Number.NaN]) expect(await store.get(missing)).toBeNull();
      expect(store.has(12)).toBe(true);
      expect(store.has(11)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('sorts a large unordered index by key (radix sort over both 16-bit halves and negative keys)', async () => {
    await writePackedStore(
      conn,
      `SELECT k, k::VARCHAR FROM (SELECT (hash(i) % 400000000)::INTEGER - 200000000 AS k FROM range(50000) t(i)) GROUP BY k ORDER BY hash(k)`,
      dir,
      'big',
    );
    const store = await PackedStore.open(dir, 'big');
    try {
      const keys = (
        await conn.runAndReadAll(`SELECT DISTINCT (hash(i) % 400000000)::INTEGER - 200000000 AS k FROM range(50000) t(i) ORDER BY k`)
      )
        .getRows()
        .map((r) => Number(r[0]));
      expect(store.size).toBe(keys.length);
      for (const key of [keys[0], keys[1], keys[keys.length >> 1], keys[keys.length - 1]]) expect(await store.get(key)).toBe(String(key));
      expect(await store.get(keys[0] - 1)).toBeNull();
      expect(await store.get(keys[keys.length - 1] + 1)).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('indexes lines cut by the read buffer and a value longer than the buffer (16 MB)', async () => {
    // 40 values of 1 MB put line ends on both sides of every 16 MB read; one value of 20 MB needs a bigger buffer.
    await writePackedStore(
      conn,
      `SELECT i::INTEGER, '"' || repeat(chr(97 + (i % 26)::INTEGER), CASE WHEN i = 20 THEN 20000000 ELSE 1000003 + i END) || '"' FROM range(40) t(i)`,
      dir,
      'long',
    );
    const store = await PackedStore.open(dir, 'long');
    try {
      expect(store.size).toBe(40);
      for (const i of [0, 15, 16, 19, 20, 21, 39]) {
        const v = (await store.get(i))!;
        expect(v.length).toBe((i === 20 ? 20000000 : 1000003 + i) + 2);
        expect(v[0] + v[1] + v[v.length - 1]).toBe(`"${String.fromCharCode(97 + (i % 26))}"`);
      }
    } finally {
      await store.close();
    }
  });

  it("writes its lines in any order but leaves the session's insertion-order setting as it found it", async () => {
    await conn.run('SET preserve_insertion_order = true');
    try {
      await writePackedStore(conn, `SELECT k, json_array(k, s)::VARCHAR FROM r`, dir, 'ordered');
      const [[kept]] = (await conn.runAndReadAll(`SELECT current_setting('preserve_insertion_order')::BOOLEAN`)).getRows();
      expect(kept).toBe(true);
    } finally {
      await conn.run('SET preserve_insertion_order = false');
    }
    await writePackedStore(conn, `SELECT k, json_array(k, s)::VARCHAR FROM r`, dir, 'unordered');
    const [[off]] = (await conn.runAndReadAll(`SELECT current_setting('preserve_insertion_order')::BOOLEAN`)).getRows();
    expect(off).toBe(false);
  });

  it('rejects duplicate keys', async () => {
    await expect(writePackedStore(conn, `SELECT 1, '"a"' UNION ALL SELECT 1, '"b"'`, dir, 'dups')).rejects.toThrow(/unique/);
  });

  it('lets in-flight reads finish on close and refuses reads after it', async () => {
    await writePackedStore(conn, `SELECT k, to_json(s)::VARCHAR FROM r`, dir, 'names');
    const store = await PackedStore.open(dir, 'names');
    const pending = store.get(12);
    await store.close();
    expect(await pending).toBe('"middle"');
    await expect(store.get(12)).rejects.toThrow(/closed/);
  });
});

describe('packed stores of published snapshots', () => {
  const spec: DomainSpec = {
    domain: 'pk',
    tablesSql: `CREATE TABLE IF NOT EXISTS things (id INTEGER, label VARCHAR);`,
    replaceTables: ['things'],
  };
  async function publish(runId: string, rows: Array<{ id: number; label: string }>) {
    const run = await StagingRun.open(dir, spec, runId);
    await run.writeRows('things', 'all', rows);
    return publishRun(run, {
      keep: 2,
      inputDigest: runId,
      derive: async (_c, ctx) => void (await ctx.writePacked('things_json', `SELECT id, to_json(label)::VARCHAR FROM things`)),
    });
  }

  it('opens the snapshot store with the reader and drops it on swap', async () => {
    await publish('run-1', [
      { id: 1, label: 'one' },
      { id: 2, label: 'two' },
    ]);
    const reader = await SnapshotReader.open(dir, 'pk', { poolSize: 1 });
    try {
      const first = reader.packed('things_json')!;
      expect(await first.get(2)).toBe('"two"');
      expect(reader.packed('nope')).toBeNull();
      await publish('run-2', [
        { id: 2, label: 'deux' },
        { id: 3, label: 'trois' },
      ]);
      expect(await reader.refresh()).toBe(true);
      const second = reader.packed('things_json')!;
      expect(second).not.toBe(first);
      expect(await second.get(2)).toBe('"deux"');
      expect(await second.get(1)).toBeNull();
      await expect(first.get(2)).rejects.toThrow(/closed/); // the old snapshot's store was dropped
    } finally {
      await reader.close();
    }
  });
});
