/**
 * The red-flag lists written in Node (jobs/fmcsa/red-flag-store.ts, redFlagListsInNode; issue 22 item 4) against
 * the SQL path they replace, record by record over crafted flagged carriers: codes of the model and others, a code
 * twice in one carrier's list, states of 2 letters A-Z and not (lower case, digits, NULL), ratings S/C/U and others,
 * NULL risk scores, filters of several blocks (RED_FLAG_BLOCK) and the SQL's passes over filter ranges. No timings
 * (speed is `npm run bench -- fmcsa`); the plan guard is that the Node path runs no window and one read of the rows.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redFlagPasses, writeRedFlagStores } from '../../jobs/fmcsa/red-flag-store.ts';
import { RED_FLAG_BLOCK, RED_FLAG_STORES } from '../../ingest/fmcsa/search-store-keys.ts';
import { openDatabase, queryRows } from '../../lib/warehouse/duckdb.ts';
import type { PackedSelect } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';
import { Rng } from '../../ingest/sample/sample-kit.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const CODES = ['A_CODE', 'B_CODE', 'C_CODE', 'D_CODE'];

describe('red-flag lists: Node and SQL write the same records', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  let dir: string;

  beforeAll(async () => {
    dir = await tempDir();
    db = await openDatabase(':memory:');
    conn = await db.connect();
    const rng = new Rng(41);
    const rows: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      const codes = Array.from({ length: 1 + Math.floor(rng.next() * 3) }, () => rng.pick([...CODES, 'OTHER', 'A_CODE']));
      const state = rng.pick(['TX', 'TX', 'CA', 'NY', 'tx', 'T1', null]);
      const rating = rng.pick(['S', 'C', 'U', 'X', null, null]);
      const score = rng.next() < 0.02 ? null : Math.floor(rng.next() * 101);
      const lit = (v: string | null) => (v === null ? 'NULL' : `'${v}'`);
      rows.push(`(${i}, ${score ?? 'NULL'}, ${lit(state)}, ${lit(rating)}, [${codes.map(lit).join(', ')}])`);
    }
    // red_flag_rows' columns the lists read (derive-red-flag-rows.sql), g in answer order (score DESC here by g).
    await conn.run(`CREATE TEMP TABLE red_flag_rows AS SELECT g, 1000 + g AS dot_number, 'N' AS legal_name, phy_state, safety_rating,
      risk_score, 'HIGH' AS risk_level, 'REVIEW' AS recommendation, red_flag_codes
      FROM (VALUES ${rows.join(', ')}) t(g, risk_score, phy_state, safety_rating, red_flag_codes)`);
  });
  afterAll(async () => {
    conn?.closeSync();
    db?.closeSync();
    await removeDir(dir);
  });

  /** Every record of both stores as writeRedFlagStores writes them (each select run before the next is asked for). */
  const storesOf = async (node: boolean, entries: number) => {
    const stores = new Map<string, { records: Map<number, string>; selects: string[] }>();
    const ctx = {
      run: { dir },
      writePacked: async (name: string, select: PackedSelect) => {
        const records = new Map<number, string>();
        const selects: string[] = [];
        const each = typeof select === 'string' ? [select] : (select as AsyncIterable<string>);
        for await (const sql of each) {
          selects.push(sql);
          for (const r of await queryRows(conn, `SELECT k::INTEGER AS k, v FROM (${sql}) s(k, v)`)) {
            expect(records.has(Number(r.k)), `${name} key ${r.k} twice`).toBe(false);
            records.set(Number(r.k), String(r.v));
          }
        }
        stores.set(name, { records, selects });
        return { records: records.size, bytes: 0 };
      },
    } as unknown as DeriveContext;
    const saved = { ...redFlagPasses };
    Object.assign(redFlagPasses, { node, entries });
    try {
      expect(await writeRedFlagStores(conn, ctx, CODES)).toBe(true);
    } finally {
      Object.assign(redFlagPasses, saved);
    }
    return stores;
  };

  it('writes every record of red_flag_lists and red_flag_row as the SQL does, byte for byte', async () => {
    const sql = await storesOf(false, 2_000);
    const node = await storesOf(true, 2_000);
    const lists = sql.get(RED_FLAG_STORES.lists)!;
    // The SQL ran several passes; some filter has several blocks; some score is NULL.
    expect(lists.selects.length).toBeGreaterThan(2);
    expect([...lists.records.values()].some((v) => /^\[\d+,\[[^\]]*,/.test(v))).toBe(true);
    expect([...lists.records.values()].some((v) => v.includes('null'))).toBe(true);
    expect(node.get(RED_FLAG_STORES.lists)!.records).toEqual(lists.records);
    expect(node.get(RED_FLAG_STORES.rows)!.records).toEqual(sql.get(RED_FLAG_STORES.rows)!.records);
    // Every header counts its filter's entries, whose blocks hold RED_FLAG_BLOCK each but the last.
    const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM red_flag_rows`);
    expect(JSON.parse(lists.records.get(0)!)[0]).toBe(Number(n));
    expect(JSON.parse(lists.records.get(1)!)[0]).toHaveLength(RED_FLAG_BLOCK);
  });

  it('reads the flagged carriers once, with no window or grouping over the entries', async () => {
    const node = (await storesOf(true, 2_000)).get(RED_FLAG_STORES.lists)!;
    // Batches of records Node appended, then the codes record: no SQL over the entries.
    for (const sql of node.selects.slice(0, -1)) expect(sql).toBe('SELECT k, v FROM red_flag_records');
    expect(node.selects.at(-1)).toMatch(/to_json/);
  });
});
