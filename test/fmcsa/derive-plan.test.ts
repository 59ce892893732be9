/**
 * The FMCSA derive's plan (issue 22 item 4; no timings: speed is `npm run bench -- fmcsa`): the packed stores whose
 * groups are many and small (one per DOT, VIN, docket, inspection) build their ordered lists with list_sort
 * (lib/warehouse/sorted-list-sql.ts), never with an ordered aggregate, whose per-group sort state cost 5-10x the
 * aggregate (crash_by_vin alone was a third of the derive's CPU at medium scale). The SQL each store writer hands
 * to writePacked is parsed by DuckDB (json_serialize_sql) and searched for an aggregate with ORDER BY. The helpers
 * give the lists an ordered aggregate gives, NULLs and descending dates included.
 */
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/env.ts';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { docketGroupedSql, docketPasses, docketRowsSql, docketStoreSelects, writeDocketStore } from '../../jobs/fmcsa/docket-store.ts';
import {
  crashByVinGroupedSql,
  crashByVinSelects,
  deriveServingStores,
  SERVING_STORES,
  storePasses,
} from '../../jobs/fmcsa/serving-stores.ts';
import { CARRIER_BY_DOCKET } from '../../jobs/fmcsa/docket-store.ts';
import { loadSql, openDatabase, queryRows } from '../../lib/warehouse/duckdb.ts';
import type { PackedSelect } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { sortedJoinSql, sortedJsonArraySql, sortedListSql } from '../../lib/warehouse/sorted-list-sql.ts';

/** Names of the aggregate calls with an ORDER BY in a parsed statement (json_serialize_sql's tree). */
function orderedAggregates(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) orderedAggregates(n, found);
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    const orders = (o.order_bys as { orders?: unknown[] } | undefined)?.orders;
    if (o.class === 'FUNCTION' && Array.isArray(orders) && orders.length > 0) found.push(String(o.function_name));
    for (const v of Object.values(o)) orderedAggregates(v, found);
  }
  return found;
}

async function parsed(conn: DuckDBConnection, sql: string): Promise<unknown> {
  const [{ j }] = await queryRows(conn, `SELECT json_serialize_sql(${`'${sql.replaceAll("'", "''")}'`})::VARCHAR AS j`);
  const tree = JSON.parse(String(j)) as { error?: boolean; error_message?: string };
  if (tree.error) throw new Error(`not parsed: ${tree.error_message}`);
  return tree;
}

/** A store select's records, key to packed value. */
async function recordsOf(conn: DuckDBConnection, sql: string): Promise<Map<number, string>> {
  return new Map((await queryRows(conn, `SELECT key::INTEGER AS k, v FROM (${sql}) t(key, v)`)).map((r) => [Number(r.k), String(r.v)]));
}

/**
 * Runs a store's selects as writePacked does (each before the next is asked for) with `passes.rows` set to `rows`
 * (so there are several passes), checks each select with `check`, and gives every record with the number of
 * selects; a key written twice fails.
 */
async function recordsOfSelects<K extends string>(
  conn: DuckDBConnection,
  passes: Record<K, number>,
  bound: K,
  limit: number,
  selectsOf: () => AsyncIterable<string>,
  check: (sql: string, index: number) => void = () => {},
): Promise<{ records: Map<number, string>; selects: number }> {
  const saved = passes[bound];
  const records = new Map<number, string>();
  let selects = 0;
  try {
    passes[bound] = limit;
    for await (const sql of selectsOf()) {
      check(sql, selects++);
      for (const [k, v] of await recordsOf(conn, sql)) {
        expect(records.has(k), String(k)).toBe(false);
        records.set(k, v);
      }
    }
  } finally {
    passes[bound] = saved;
  }
  return { records, selects };
}

describe('FMCSA derive plan: store lists without ordered aggregates', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  const written = new Map<string, string[]>();

  beforeAll(async () => {
    db = await openDatabase(':memory:');
    conn = await db.connect();
    // The domain's tables, empty: the writers read their columns (DESCRIBE) and build the same SQL at any size.
    await conn.run(loadSql('../../jobs/fmcsa/tables.sql', import.meta.url));
    const collect = async (select: PackedSelect) => {
      const out: string[] = [];
      if (typeof select === 'string') out.push(select);
      else for await (const s of select as AsyncIterable<string>) out.push(s);
      return out;
    };
    const ctx = {
      run: { dir: '/nonexistent' },
      samePartsAsPrevious: async () => false,
      linkPreviousPacked: async () => false,
      previous: null,
      writePacked: async (name: string, select: PackedSelect) => {
        written.set(name, await collect(select));
        return { records: 0, bytes: 0 };
      },
    } as unknown as DeriveContext;
    await deriveServingStores(conn, ctx, async (_name, fn) => {
      await fn();
    });
    await writeDocketStore(conn, ctx);
  });
  afterAll(() => {
    conn?.closeSync();
    db?.closeSync();
  });

  it('writes every per-key store, each from SQL with no ORDER BY inside an aggregate', async () => {
    expect([...written.keys()].sort()).toEqual([...Object.values(SERVING_STORES), CARRIER_BY_DOCKET].sort());
    for (const [name, selects] of written) {
      expect(selects.length, name).toBeGreaterThan(0);
      for (const sql of selects) expect(orderedAggregates(await parsed(conn, sql)), name).toEqual([]);
    }
  });

  it('never reads a whole big table per pass: each pass reads its own file (by VIN) or its DOT range (by DOT)', async () => {
    const dir = await tempDir('fmcsa-passes-');
    const saved = { ...storePasses };
    const seen = new Map<string, string[]>();
    const records = new Map<string, number[]>();
    try {
      // 20 VINs of two crash rows each (the passes' rows) and 20 of one row (written from that row, no pass).
      await conn.run(`INSERT INTO crashes (crash_id, dot_number, vin, report_date, report_seq_no)
        SELECT i, 1000 + i % 7, 'VIN' || (i % 40), DATE '2024-01-01' + i::INTEGER, 1 FROM range(60) t(i)`);
      await conn.run(
        `INSERT INTO inspections (inspection_id, dot_number, insp_date) SELECT i, 1000 + i, DATE '2024-01-01' FROM range(40) t(i)`,
      );
      // Passes of 2 keys each, whatever their JSON.
      storePasses.keys = 2;
      storePasses.bytes = 1e12;
      const ctx = {
        run: { dir },
        samePartsAsPrevious: async () => false,
        linkPreviousPacked: async () => false,
        previous: null,
        writePacked: async (name: string, select: PackedSelect) => {
          const out: string[] = [];
          const counts: number[] = [];
          // Each pass runs before the next is asked for (its file exists only then), as writePackedStore does.
          for await (const sql of select as AsyncIterable<string>) {
            await conn.run(`CREATE OR REPLACE TEMP TABLE pass_out AS ${sql}`);
            out.push(sql);
            counts.push(Number((await queryRows(conn, 'SELECT count(*)::INTEGER AS n FROM pass_out'))[0]!.n));
          }
          seen.set(name, out);
          records.set(name, counts);
          return { records: 0, bytes: 0 };
        },
      } as unknown as DeriveContext;
      await deriveServingStores(conn, ctx, async (_name, fn) => {
        await fn();
      });
      // The pass files are gone, and so is their folder: nothing of them is published with the snapshot.
      expect(await readdir(dir)).toEqual([]);
      // By VIN (an MD5: no row group can be skipped): the keys of one row are written in one streaming select over the
      // table, no grouping; each pass of the other keys reads its key range of a temp table of their rows, written once.
      const [single, ...vin] = seen.get(SERVING_STORES.crashByVin) ?? [];
      expect(single).toMatch(/FROM crashes\b/);
      expect(single).not.toMatch(/GROUP BY/i);
      expect(vin.length).toBeGreaterThan(2);
      for (const sql of vin) {
        expect(sql).toMatch(/FROM crash_vin_shared_rows WHERE \(key (<=|>) \d+/);
        expect(sql).not.toMatch(/FROM crashes\b/);
      }
      // By DOT (the files are in DOT order) each pass filters its table by its DOT range, every read of it included.
      for (const [name, table] of [
        [SERVING_STORES.crashByDot, 'crashes'],
        [SERVING_STORES.inspectionByDot, 'inspections'],
      ] as const) {
        const passes = seen.get(name) ?? [];
        expect(passes.length, name).toBeGreaterThan(2);
        // A pass aggregates at most storePasses.keys keys (one record each), and every key is in one pass.
        const counts = records.get(name) ?? [];
        expect(Math.max(...counts), name).toBe(2);
        expect(
          counts.reduce((a, b) => a + b, 0),
          name,
        ).toBe(name === SERVING_STORES.crashByDot ? 7 : 40);
        for (const sql of passes) {
          const reads = sql.match(new RegExp(`FROM \\(?(SELECT \\* FROM )?${table}\\b[^)]*`, 'g')) ?? [];
          expect(reads.length, name).toBeGreaterThan(0);
          for (const r of reads) expect(r, name).toMatch(/WHERE \(dot_number (<=|>) \d+/);
        }
      }
    } finally {
      Object.assign(storePasses, saved);
      await conn.run('DELETE FROM crashes; DELETE FROM inspections; DROP TABLE IF EXISTS pass_out');
      await removeDir(dir);
    }
  });

  it('finds an ordered aggregate where there is one (the guard can fail)', async () => {
    expect(orderedAggregates(await parsed(conn, 'SELECT k, list(x ORDER BY y DESC) FROM t GROUP BY k'))).toEqual(['list']);
    expect(orderedAggregates(await parsed(conn, 'SELECT k, list(x) FROM t GROUP BY k'))).toEqual([]);
  });

  it('gives the lists of the ordered aggregates: NULL keys last, descending dates and numbers, joined texts', async () => {
    await conn.run(`CREATE TEMP TABLE s AS SELECT * FROM (VALUES
      (1, 'a', DATE '2024-01-02', 5, '{"a":1}'), (1, 'b', NULL, 7, '[2,"x"]'), (1, 'c', DATE '2025-06-01', NULL, '"é\\u0001"'),
      (1, 'd', DATE '2023-03-04', 5, 'null'), (2, 'e', NULL, NULL, '[]'), (1, 'f', DATE '2024-01-02', 9, '{}')) t(k, x, d, n, j)`);
    const cases: Array<[string, string]> = [
      [sortedListSql('x', [{ desc: 'd', date: true }, 'x']), 'list(x ORDER BY d DESC NULLS LAST, x)'],
      [sortedListSql('x', ['d', { desc: 'n' }]), 'list(x ORDER BY d, n DESC NULLS LAST)'],
      [sortedListSql('n', [{ desc: 'n' }, 'x']), 'list(n ORDER BY n DESC NULLS LAST, x)'],
      [sortedJoinSql('x', ['n', 'x'], 'chr(1)'), 'string_agg(x, chr(1) ORDER BY n, x)'],
      [sortedJsonArraySql('j', [{ desc: 'd', date: true }, 'x']), 'to_json(list(j::JSON ORDER BY d DESC NULLS LAST, x))::VARCHAR'],
    ];
    for (const [mine, ordered] of cases) {
      const rows = await queryRows(conn, `SELECT k, (${mine})::VARCHAR AS got, (${ordered})::VARCHAR AS want FROM s GROUP BY k ORDER BY k`);
      for (const r of rows) expect(r.got, mine).toBe(r.want);
    }
  });
  it('writes each crash_by_vin record from its one row as the general grouping does, and groups every other key', async () => {
    // 100,000 crash rows over 60,000 VINs (so some keys hold two VINs: MD5 prefixes of 28 bits collide), crashes of
    // one to three vehicles, VINs in several crashes or twice in one, NULL counts and flags, a JSON-escaped VIN.
    await conn.run(`CREATE TEMP TABLE vin_crashes AS
      SELECT (i // 3)::BIGINT AS crash_id, DATE '2020-01-01' + (hash(i) % 900)::INTEGER AS report_date,
        (i % 3 + 1)::INTEGER AS report_seq_no, (i % 5000)::INTEGER AS dot_number,
        CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN 'V"' || (i % 60000) ELSE 'V' || (i % 60000) END AS vin,
        CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 4)::INTEGER END AS fatalities, (i % 3)::INTEGER AS injuries,
        CASE WHEN i % 11 = 0 THEN NULL ELSE i % 2 = 0 END AS tow_away
      FROM range(100000) t(i)`);
    const row = `json_array(c.crash_id::VARCHAR, c.report_date, c.report_seq_no, c.dot_number, c.vin, c.fatalities, c.injuries, c.tow_away)`;
    const general = await recordsOf(conn, crashByVinGroupedSql(row, 'vin_crashes'));
    // The store's selects as writePacked runs them, in several passes.
    const { records: fast, selects } = await recordsOfSelects(conn, storePasses, 'keys', 4_000, () =>
      crashByVinSelects(conn, row, 0, 'vin_crashes'),
    );
    expect(selects).toBeGreaterThan(2);
    expect(fast.size).toBe(general.size);
    for (const [k, v] of general) expect(fast.get(k), String(k)).toBe(v);
    // Both paths were taken: keys of one row, keys of several (a VIN in several crashes), keys of two VINs.
    const shapes = [...general.values()].map((v) => JSON.parse(v) as Array<[string, number[], unknown[][]]>);
    expect(shapes.some((e) => e.length === 1 && e[0]![2].length === 1 && e[0]![2][0]!.length === 1)).toBe(true);
    expect(shapes.some((e) => e.length === 1 && e[0]![2].length > 1)).toBe(true);
    expect(shapes.some((e) => e.length > 1)).toBe(true);
    await conn.run('DROP TABLE vin_crashes');
  });

  it("hashes each crash row to its VIN key twice (the shared keys' rows once more, after a cheaper filter) and builds its JSON once", async () => {
    // crash_by_vin's statements (its temp tables' selects and the store's selects), parsed (json_serialize_sql): an
    // expression is evaluated over every crash row when its SELECT reads the table (directly or through such SELECTs)
    // with no subquery test (IN / NOT IN) on the way. Before: three MD5s of every VIN, and every row's JSON built in
    // the one-row keys' select before its key's test (the shared keys' rows built theirs again).
    await conn.run(`CREATE TEMP TABLE vin_crashes AS
      SELECT (i // 2)::BIGINT AS crash_id, DATE '2020-01-01' + (i % 900)::INTEGER AS report_date, (i % 2 + 1)::INTEGER AS report_seq_no,
        (i % 50)::INTEGER AS dot_number, 'V' || (i % 700) AS vin, (i % 4)::INTEGER AS fatalities, (i % 3)::INTEGER AS injuries, i % 2 = 0 AS tow_away
      FROM range(1000) t(i)`);
    const row = `json_array(c.crash_id::VARCHAR, c.report_date, c.report_seq_no, c.dot_number, c.vin, c.fatalities, c.injuries, c.tow_away)`;
    const statements: unknown[] = [];
    const spy = new Proxy(conn, {
      get(target, prop) {
        if (prop === 'run')
          return async (sql: string) => {
            const ctas = /^\s*CREATE OR REPLACE TEMP TABLE \w+ AS\b/i.exec(sql);
            if (ctas) statements.push(await parsed(conn, sql.slice(ctas[0].length)));
            return target.run(sql);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    let selects = 0;
    for await (const sql of crashByVinSelects(spy, row, 0, 'vin_crashes')) {
      statements.push(await parsed(conn, sql));
      await conn.run(`CREATE OR REPLACE TEMP TABLE pass_out AS ${sql}`);
      selects++;
    }
    type Node = Record<string, unknown>;
    const has = (n: unknown, test: (o: Node) => boolean): boolean =>
      Array.isArray(n)
        ? n.some((x) => has(x, test))
        : !!n && typeof n === 'object' && (test(n as Node) || Object.values(n).some((v) => has(v, test)));
    const isSubquery = (o: Node) => o.class === 'SUBQUERY';
    const everyRow = (sel: Node): boolean => {
      if (has(sel.where_clause, isSubquery)) return false;
      const from = sel.from_table as Node;
      if (from?.type === 'BASE_TABLE') return from.table_name === 'vin_crashes';
      return from?.type === 'SUBQUERY' && everyRow((from.subquery as { node: Node }).node);
    };
    /** The statements with a SELECT evaluating `fn` over every crash row. */
    const overEveryRow = (fn: string) =>
      statements.filter((st) =>
        has(
          st,
          (o) => o.type === 'SELECT_NODE' && everyRow(o) && has(o.select_list, (e) => e.class === 'FUNCTION' && e.function_name === fn),
        ),
      ).length;
    expect(selects).toBeGreaterThan(1);
    expect(statements.length).toBeGreaterThan(3);
    // Counting the keys, and the one-row keys' select (which writes the key): no third MD5 of every VIN.
    expect(overEveryRow('md5')).toBe(2);
    expect(overEveryRow('hash')).toBe(1);
    // A row's JSON (and the one-row record around it) only after its key's test.
    expect(overEveryRow('json_array')).toBe(0);
    await conn.run('DROP TABLE vin_crashes; DROP TABLE pass_out');
  });

  it('writes each carrier_by_docket record of one docket row from that row as the general grouping does, and groups every other key', async () => {
    // 60,000 carriers, dockets drawn from 50,000 (so some dockets have several carriers, some keys two dockets), a
    // docket twice in one carrier's columns, NULL power units, a JSON-escaped docket.
    await conn.run(`CREATE TEMP TABLE docket_carriers AS
      SELECT (100000 + i)::INTEGER AS dot_number, CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 40)::INTEGER END AS power_units,
        CASE WHEN i % 5 = 0 THEN NULL WHEN i % 101 = 0 THEN 'MC"' || (hash(i) % 50000) ELSE 'MC' || (hash(i) % 50000) END AS docket1,
        CASE WHEN i % 7 = 0 THEN 'MX' || (i % 900) WHEN i % 11 = 0 THEN 'MC' || (hash(i) % 50000) END AS docket2,
        CASE WHEN i % 17 = 0 THEN 'FF' || (i % 300) END AS docket3
      FROM range(60000) t(i)`);
    const general = await recordsOf(conn, docketGroupedSql(`(${docketRowsSql('docket_carriers')})`));
    const { records: fast, selects } = await recordsOfSelects(
      conn,
      docketPasses,
      'rows',
      2_000,
      () => docketStoreSelects(conn, 'docket_carriers'),
      (sql, index) => {
        // The keys of one docket row come first, straight from their rows (no grouping); then the shared keys'
        // passes, each over its key range of the temp table of docket rows (not the carriers again).
        if (index === 0) expect(sql).not.toMatch(/GROUP BY/i);
        else expect(sql).toMatch(/FROM docket_rows WHERE key >= \d+ AND key < \d+/);
        expect(sql).not.toMatch(/FROM docket_carriers/);
      },
    );
    expect(selects).toBeGreaterThan(2);
    expect(fast.size).toBe(general.size);
    for (const [k, v] of general) expect(fast.get(k), String(k)).toBe(v);
    const shapes = [...general.values()].map((v) => JSON.parse(v) as Array<[string, number[]]>);
    expect(shapes.some((e) => e.length === 1 && e[0]![1].length === 1)).toBe(true);
    expect(shapes.some((e) => e.length === 1 && e[0]![1].length > 1)).toBe(true);
    await conn.run('DROP TABLE docket_carriers');
  });
});
