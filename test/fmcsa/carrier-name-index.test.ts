/**
 * The carrier name index built at FMCSA publish (jobs/fmcsa/derive-carrier-name-split.sql, -terms.sql, -dict.sql) read by
 * service/carriers/search-carriers-by-term.sql, over hand-made and random names the generated sample lacks: DBA
 * names, punctuation and leading separators, one-word names, repeated words, non-ASCII letters (one of which
 * lower-cases to ASCII), digits, fleet-size ties and nulls. For every name query the index answers, one word
 * (search-carriers-by-term.sql) or a phrase (search-carriers-by-phrase.sql), its page (DOTs and ranks, in order) and
 * total equal those of the scan (search-carriers-page.sql).
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameHitsSql, nameIndexSql } from '../../jobs/fmcsa/carrier-name-index.ts';
import { MAX_DOT, nameHitsBatchesInNode, nameHitPostingsSql, nameHitsWalk, readCarrierOrder } from '../../jobs/fmcsa/carrier-name-hits.ts';
import { deriveNameRuns, nameSetsBatchesInNode, nameSetsOptions } from '../../jobs/fmcsa/carrier-name-sets.ts';
import {
  CARRIER_NAME_SETS,
  decodeOrdSet,
  dotsOfOrds,
  encodeOrdSet,
  type NamesOf,
  nameSetsPage,
  PAIR_PHRASE,
  termSetKey,
} from '../../ingest/fmcsa/name-sets.ts';
import { PackedStore, writePackedStore } from '../../lib/warehouse/packed-store.ts';
import { NameSetsCache } from '../../service/carriers/name-sets-cache.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { NAME_HITS_HEADER, NAME_HITS_SLOTS, NAME_HITS_TERMS_KEY, nameHitsPage } from '../../ingest/fmcsa/search-store-keys.ts';
import { loadSql, type Params, queryRows } from '../../lib/warehouse/duckdb.ts';
import { Rng } from '../../ingest/sample/sample-kit.ts';

/**
 * The index's tables of the carriers table as it is, as the publish derives them (carrier-name-index.ts; there the
 * terms and the dictionary are parquet-only tables, here tables of the same queries), with the sets store's temp
 * tables of pairs and digit runs read off the same split.
 */
async function deriveIndexTables(conn: DuckDBConnection): Promise<void> {
  await conn.run(nameIndexSql.split);
  await conn.run(`CREATE OR REPLACE TABLE carrier_name_terms AS ${nameIndexSql.terms}`);
  await conn.run(`CREATE OR REPLACE TABLE carrier_name_dict AS ${nameIndexSql.dict}`);
  await deriveNameRuns(conn);
  await conn.run('DROP TABLE carrier_name_split');
}
const service = (f: string) => loadSql(`../../service/carriers/${f}`, import.meta.url);
/** The names the index answers as one word (carriers.queries.ts nameIndexQuery). */
const INDEXED = /^[a-z0-9]*[a-z][a-z0-9]*$/;
/** The names it answers as a phrase: a first run of [a-z0-9] with a letter, then a separator and anything else. */
const isPhrase = (name: string) => /^[a-z0-9]*[a-z][a-z0-9]*[^a-z0-9]/.test(name);

type Carrier = [legal: string | null, dba: string | null, powerUnits: number | null, state: string | null];
const HAND_MADE: Carrier[] = [
  ['EAGLE', null, 3, 'TX'],
  ['Eagle Trucking LLC', 'EAGLE EXPRESS', 10, 'TX'],
  ['-EAGLE- LINES', null, 2, 'CA'],
  ['A-1 EAGLE, INC.', 'A1 EAGLE', null, 'TX'],
  ['EAGLES NEST TRANSPORT', '', 5, null],
  ['BALD EAGLE EAGLE CO', 'bald eagle', 5, 'FL'],
  ['SEAGLE LOGISTICS', null, 0, 'TX'],
  ['CAFÉ EXPRESS', 'ÉCOLE FREIGHT', 7, 'NY'],
  ['STRAßE HAULING', null, 1, 'NY'],
  ['24/7 LOGISTICS', null, 4, 'TX'],
  ['J B HUNT TRANSPORT INC', 'JB HUNT', 20000, 'AR'],
  ['JB', null, 1, 'AR'],
  [null, 'NO LEGAL NAME CARRIER', 2, 'GA'],
  ['TRUCK', 'TRUCKING TRUCK', 2, 'GA'],
  ['  LEADING SPACE TRUCKING', null, 8, 'OH'],
  ['KELVIN \u212AING LLC', null, 3, 'OH'],
  ['EA', 'EA', null, 'TX'],
  ['eagle', 'EAGLE', 3, 'TX'],
  // States that are not 2 letters A-Z: counted over all states, listed under none.
  ['EAGLE FREIGHT', null, 4, 'tx'],
  ['TRUCK LINES', 'EAGLE', null, 'T1'],
  // A run of digits then letters: a phrase ending in '24' is open to it.
  ['TRUCK 24X7 EXPRESS', null, 3, 'TX'],
];
const WORDS = ['eagle', 'Eagles', 'truck', 'TRUCKING', 'ea', 'express', 'a1', 'A', '24', 'co', 'llc', 'Café', 'jb', 'x9z', 'seagle'];
const SEPARATORS = [' ', ' ', ' ', '-', ', ', '.', ' & ', '/', "'"];

describe('carrier name index: the same page and total as the scan of every name', () => {
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  const rng = new Rng(22);
  const rnd = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => rng.pick(xs);
  const randomName = () => {
    let s = rnd() < 0.15 ? pick(SEPARATORS) : '';
    const n = 1 + Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) s += (i ? pick(SEPARATORS) : '') + pick(WORDS);
    return s;
  };
  const carriers: Carrier[] = [...HAND_MADE];
  for (let i = 0; i < 400; i++)
    carriers.push([
      rnd() < 0.03 ? null : randomName(),
      rnd() < 0.3 ? randomName() : null,
      rnd() < 0.1 ? null : Math.floor(rnd() * 6),
      rnd() < 0.05 ? null : pick(['TX', 'CA', 'NY']),
    ]);

  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    conn = await db.connect();
    await conn.run(`CREATE TABLE carriers (dot_number INTEGER, legal_name VARCHAR, dba_name VARCHAR, phy_city VARCHAR,
      phy_state VARCHAR, status_code VARCHAR, carrier_operation VARCHAR, power_units INTEGER, total_drivers INTEGER,
      docket1 VARCHAR, docket2 VARCHAR, docket3 VARCHAR)`);
    const app = await conn.createAppender('carriers');
    carriers.forEach(([legal, dba, units, state], i) => {
      app.appendInteger(1000 + ((i * 7919) % 100_000));
      legal == null ? app.appendNull() : app.appendVarchar(legal);
      dba == null ? app.appendNull() : app.appendVarchar(dba);
      app.appendVarchar('SALEM');
      state == null ? app.appendNull() : app.appendVarchar(state);
      app.appendVarchar('A');
      app.appendVarchar('A');
      units == null ? app.appendNull() : app.appendInteger(units);
      app.appendInteger(1);
      for (let k = 0; k < 3; k++) app.appendNull();
      app.endRow();
    });
    app.closeSync();
    await deriveIndexTables(conn);
  });
  afterAll(() => {
    conn?.closeSync();
    db?.closeSync();
  });

  const indexPage = async (p: Params) =>
    (await queryRows(conn, service('search-carriers-by-term.sql'), p)).map((r) => [r.dot_number, r.rank, Number(r.total)]);
  const scanPage = async (p: Params) =>
    (await queryRows(conn, service('search-carriers-page.sql'), { dot: null, mc: null, ...p })).map((r) => [
      r.dot_number,
      r.rank,
      Number(r.total),
    ]);

  it('answers words, prefixes, inner fragments, whole names, mixed case and no-match queries as the scan does', async () => {
    const queries = new Set<string>(['ea', 'eagle', 'eagles', 'seagle', 'truck', 'trucking', 'kelvin', 'king', 'jb', 'caf']);
    for (const w of ['zz', 'zzqx', 'x9', 'a1', '9z', 'b', 'st', 'ucki', 'llc', 'gle']) queries.add(w);
    for (const [legal, dba] of carriers)
      for (const name of [legal, dba]) {
        if (!name) continue;
        const lc = name.toLowerCase();
        for (const w of lc.split(/[^a-z0-9]+/)) if (w) queries.add(w);
        const at = Math.floor(rnd() * lc.length);
        queries.add(lc.slice(at, at + 2 + Math.floor(rnd() * 6)));
        queries.add(lc.slice(0, 2 + Math.floor(rnd() * 5)));
        queries.add(lc);
      }
    let indexed = 0;
    for (const raw of queries) {
      // The route trims and lower-cases the name (carriers.queries.ts searchCarriers) and wants 2 characters.
      const name = raw.trim().toLowerCase();
      if (name.length < 2 || !INDEXED.test(name)) continue;
      indexed++;
      for (const [state, limit, offset] of [
        [null, 20, 0],
        [null, 5, 3],
        ['TX', 20, 0],
        [null, 10, 10_000],
      ] as const) {
        const p = { name, state, limit, offset };
        expect(await indexPage(p), JSON.stringify(p)).toEqual(await scanPage(p));
      }
    }
    expect(indexed).toBeGreaterThan(60);
  });

  const phrasePage = async (p: Params) =>
    (await queryRows(conn, service('search-carriers-by-phrase.sql'), p)).map((r) => [r.dot_number, r.rank, Number(r.total)]);

  it('answers phrases (words across separators, whole names, parts of words, digits, trailing separators) as the scan does', async () => {
    const queries = new Set<string>(['eagle trucking', 'agle truck', 'bald eagle eagle', 'eagle eagle', 'j b hunt', 'b hunt tr']);
    for (const q of [
      'a-1 eagle',
      'eagle, inc',
      'eagle , inc',
      'eagles nest',
      'leading space',
      'café express',
      'fé express',
      'zz qq',
      'eagle zzqx',
      'zzqx eagle',
    ])
      queries.add(q);
    for (const q of ['truck lines', 'eagle-eagle', 'eagle  eagle', 'kelvin king', 'trucking truck', 'no legal name carrier'])
      queries.add(q);
    for (const [legal, dba] of carriers)
      for (const name of [legal, dba]) {
        if (!name) continue;
        const lc = name.trim().toLowerCase();
        queries.add(lc);
        // A stretch across at least one separator, from inside a word to inside another.
        for (let i = 0; i < 2; i++) {
          const at = Math.floor(rnd() * lc.length);
          queries.add(lc.slice(at, at + 3 + Math.floor(rnd() * 14)).trim());
        }
      }
    let phrases = 0;
    let ranked = 0;
    for (const name of queries) {
      if (!isPhrase(name)) continue;
      phrases++;
      // Every phrase's first page; every fourth one's state filter and later pages too.
      const pages = [
        [null, 20, 0],
        [null, 5, 2],
        ['TX', 20, 0],
        [null, 10, 10_000],
      ] as const;
      for (const [state, limit, offset] of phrases % 4 ? pages.slice(0, 1) : pages) {
        const p = { name, state, limit, offset };
        const got = await phrasePage(p);
        expect(got, JSON.stringify(p)).toEqual(await scanPage(p));
        if (offset === 0 && state === null && got.some((r) => r[1] !== 2)) ranked++;
      }
    }
    expect(phrases).toBeGreaterThan(150);
    // Whole names and name prefixes among them: ranks 0 and 1 are exercised, not only "contains".
    expect(ranked).toBeGreaterThan(40);
    // The dictionary's counts are the postings' counts.
    const [{ off }] = await queryRows(
      conn,
      `SELECT count(*)::INTEGER AS off FROM carrier_name_dict d WHERE d.n <> (SELECT count(*) FROM carrier_name_terms t WHERE t.term = d.term)`,
    );
    expect(off).toBe(0);
  });

  it('finds every carrier with the name in its legal or DBA name, including a non-ASCII letter that lower-cases to ASCII', async () => {
    const all = (name: string) => indexPage({ name, state: null, limit: 1000, offset: 0 });
    const king = await all('king');
    expect(king.length).toBeGreaterThan(0);
    expect(king).toEqual(await scanPage({ name: 'king', state: null, limit: 1000, offset: 0 }));
    // 'EAGLE' (legal) and 'eagle' (legal, DBA 'EAGLE'), among others, are exact names: rank 0, listed first.
    const eagle = await all('eagle');
    expect(eagle).toEqual(await scanPage({ name: 'eagle', state: null, limit: 1000, offset: 0 }));
    const exact = eagle.filter((r) => r[1] === 0).length;
    expect(exact).toBeGreaterThanOrEqual(2);
    expect(eagle.slice(0, exact).every((r) => r[1] === 0)).toBe(true);
  });
  it('holds, in the packed hits store, the page and total of the scan for every word taken as a query', async () => {
    // The store's records as the publish computes them (every word of 2+ characters, one pass), read back through
    // the route's decoding (nameHitsPage) with a Map for the store.
    await conn.run(nameHitsSql.terms(1));
    await conn.run(nameHitsSql.pairs);
    const records = new Map<number, string>();
    for (const r of await queryRows(conn, nameHitsSql.pass(0, 1_000_000))) records.set(Number(r.k), String(r.v));
    const terms = (await queryRows(conn, `SELECT q FROM name_hit_terms ORDER BY qi`)).map((r) => String(r.q));
    expect(records.has(NAME_HITS_TERMS_KEY)).toBe(false);
    const get = async (k: number) => records.get(k) ?? null;
    expect(terms.length).toBeGreaterThan(15);
    for (const name of terms)
      for (const [state, limit, offset] of [
        [null, 20, 0],
        [null, 5, 3],
        ['TX', 20, 0],
        ['NY', 7, 2],
        [null, 1000, 0],
        [null, 10, 10_000],
      ] as const) {
        const p = { name, state, limit, offset };
        const page = await nameHitsPage(get, terms, name, state, limit, offset);
        const scan = await scanPage(p);
        expect(page, JSON.stringify(p)).not.toBeNull();
        expect(page!.dots, JSON.stringify(p)).toEqual(scan.map((r) => r[0]));
        expect(page!.total, JSON.stringify(p)).toBe(scan.length ? scan[0]![2] : 0);
      }
    // A query that is no indexed term is not answered by the store.
    expect(await nameHitsPage(get, terms, 'ucki', null, 20, 0)).toBeNull();
  });
  it('writes each term header with its keys in a fixed order, the same bytes whatever the threads and passes', async () => {
    await conn.run(nameHitsSql.terms(1));
    await conn.run(nameHitsSql.pairs);
    const headers = async (threads: number, passes: Array<[number, number]>) => {
      await conn.run(`SET threads = ${threads}`);
      const out = new Map<number, string>();
      for (const [lo, hi] of passes)
        for (const r of await queryRows(conn, nameHitsSql.pass(lo, hi)))
          if (Number(r.k) % NAME_HITS_SLOTS === NAME_HITS_HEADER) out.set(Number(r.k), String(r.v));
      return out;
    };
    const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM name_hit_terms`);
    const one = await headers(1, [[0, 1_000_000]]);
    expect(one.size).toBe(Number(n));
    for (const text of one.values()) {
      // '*' first, then the states ascending; compact JSON as JSON.stringify writes it.
      const keys = Object.keys(JSON.parse(text) as Record<string, number>);
      expect(keys[0]).toBe('*');
      expect(keys).toEqual([...keys].sort());
      expect(text).toBe(JSON.stringify(JSON.parse(text)));
    }
    const half = Math.floor(Number(n) / 2);
    expect(
      await headers(4, [
        [0, half],
        [half + 1, 1_000_000],
      ]),
    ).toEqual(one);
    await conn.run('RESET threads');
  });

  /** Every record of the hits store's passes over `ranges`, by key (a key written twice fails). */
  const recordsOf = async (selects: Iterable<string> | AsyncIterable<string>) => {
    const out = new Map<number, string>();
    let n = 0;
    for await (const sql of selects) {
      n++;
      for (const r of await queryRows(conn, sql)) {
        expect(out.has(Number(r.k)), `key ${r.k} twice`).toBe(false);
        out.set(Number(r.k), String(r.v));
      }
    }
    return { records: out, selects: n };
  };
  it('computes in Node, pass by pass, every record hitsPassSql writes, byte for byte', async () => {
    await conn.run(nameHitsSql.terms(1));
    await conn.run(nameHitsSql.pairs);
    const [{ n }] = await queryRows(conn, `SELECT count(*)::INTEGER AS n FROM name_hit_terms`);
    const sql = await recordsOf([nameHitsSql.pass(0, 1_000_000)]);
    expect(sql.records.size).toBeGreaterThan(Number(n));
    const saved = nameHitsWalk.bitmapFrom;
    try {
      // Each term's carriers ordered by sorting their postings, by walking rank bitmaps, and by either as they come.
      for (const bitmapFrom of [Number.POSITIVE_INFINITY, 0, 40, null])
        for (const ranges of [
          [[0, Number(n) - 1]],
          [
            [0, 2],
            [3, 3],
            [4, Number(n) - 1],
          ],
        ] as Array<Array<[number, number]>>) {
          nameHitsWalk.bitmapFrom = bitmapFrom;
          const batches = await nameHitsBatchesInNode(conn, ranges);
          expect(batches).not.toBeNull();
          const node = await recordsOf(batches!);
          // One select per pass, of the records Node appended: no grouping or window over the hits in DuckDB.
          expect(node.selects).toBe(ranges.length);
          expect(node.records, String(bitmapFrom)).toEqual(sql.records);
        }
    } finally {
      nameHitsWalk.bitmapFrom = saved;
    }
    // The postings select of a pass is a join and a projection: parsed, it has no GROUP BY and no window function
    // (hitsPassSql, which has both, shows the check can fail).
    const tree = async (sql: string) =>
      String((await queryRows(conn, `SELECT json_serialize_sql('${sql.replaceAll("'", "''")}')::VARCHAR AS j`))[0]!.j);
    const grouping = /"group_expressions":\[\{|"class":"WINDOW"/;
    expect(await tree(nameHitsSql.pass(0, 9))).toMatch(grouping);
    const postings = await tree(nameHitPostingsSql(0, 9));
    expect(postings).not.toMatch(grouping);
    expect(postings).toMatch(/"type":"JOIN"/);
  });
  it('leaves the store to hitsPassSql when a DOT does not fit the order array or repeats', async () => {
    await conn.run(nameHitsSql.terms(1));
    await conn.run(nameHitsSql.pairs);
    await conn.run(`CREATE TABLE carriers_saved AS SELECT * FROM carriers`);
    try {
      await conn.run(`INSERT INTO carriers (dot_number, legal_name) VALUES (${MAX_DOT + 1}, 'FAR AWAY TRUCKING')`);
      expect(await nameHitsBatchesInNode(conn, [[0, 0]])).toBeNull();
      await conn.run(`DELETE FROM carriers WHERE dot_number > ${MAX_DOT}`);
      await conn.run(`INSERT INTO carriers (dot_number, legal_name) SELECT dot_number, 'TWICE' FROM carriers LIMIT 1`);
      expect(await nameHitsBatchesInNode(conn, [[0, 0]])).toBeNull();
    } finally {
      await conn.run(`CREATE OR REPLACE TABLE carriers AS SELECT * FROM carriers_saved`);
      await conn.run(`DROP TABLE carriers_saved`);
    }
  });

  /** The sets' page of `p` (and, for a longer phrase, `namesOf`) is the scan's: its DOTs in order and its total. */
  const expectScanPage = (
    sets: NameSetsCache,
    p: { name: string; state: string | null; limit: number; offset: number },
    scan: unknown[][],
    namesOf: NamesOf | null = null,
  ) => {
    const page = nameSetsPage(sets, sets.finder, sets.scratch, p.name, p.state, p.limit, p.offset, namesOf);
    expect(page, JSON.stringify(p)).not.toBeNull();
    expect(dotsOfOrds(sets, page!.ords), JSON.stringify(p)).toEqual(scan.map((r) => r[0]));
    expect(page!.total, JSON.stringify(p)).toBe(scan.length ? scan[0]![2] : 0);
  };
  it('answers every word and part of a word from the sets store as the scan does, whatever the cache holds', async () => {
    // The store as the publish writes it (carrier-name-sets.ts through writePackedStore), read through the route's
    // cache: once with room for every set, once with room for two (every read decodes again, evicting the last).
    const order = await readCarrierOrder(conn);
    expect(order).not.toBeNull();
    const dir = await tempDir('name-sets-');
    try {
      const batches = await nameSetsBatchesInNode(conn, order!);
      expect(batches).not.toBeNull();
      await writePackedStore(conn, batches!, dir, CARRIER_NAME_SETS);
      const store = await PackedStore.open(dir, CARRIER_NAME_SETS);
      const roomy = NameSetsCache.open(store)!;
      const tight = NameSetsCache.open(store, 1)!;
      // Both encodings occur: a frequent term's set is a bitmap, a rare one's a list.
      const kinds = new Set<string>();
      for (let i = 0; i < roomy.header.terms.length; i++) {
        const s = roomy.set(termSetKey(i, 'contains'));
        if (s) kinds.add(s.bits ? 'bits' : 'list');
      }
      expect([...kinds].sort()).toEqual(['bits', 'list']);
      const queries = new Set<string>([
        'ea',
        'eagle',
        'eagles',
        'truck',
        'trucking',
        'ucki',
        'gle',
        'king',
        'jb',
        'caf',
        'a1',
        'x9',
        'zzqx',
      ]);
      for (const [legal, dba] of carriers)
        for (const name of [legal, dba]) {
          if (!name) continue;
          const lc = name.toLowerCase();
          for (const w of lc.split(/[^a-z0-9]+/)) {
            if (!w) continue;
            queries.add(w);
            const at = Math.floor(rnd() * w.length);
            queries.add(w.slice(at, at + 2 + Math.floor(rnd() * 4)));
          }
        }
      let words = 0;
      let ranked = 0;
      for (const name of queries) {
        if (name.length < 2 || !INDEXED.test(name)) continue;
        words++;
        for (const [state, limit, offset] of [
          [null, 20, 0],
          [null, 5, 3],
          [null, 1000, 0],
          ['TX', 20, 0],
          ['NY', 3, 1],
          ['ZZ', 20, 0],
          [null, 10, 10_000],
        ] as const) {
          const p = { name, state, limit, offset };
          const scan = await scanPage(p);
          if (offset === 0 && state === null && scan.some((r) => r[1] !== 2)) ranked++;
          for (const sets of [roomy, tight]) expectScanPage(sets, p, scan);
        }
      }
      expect(words).toBeGreaterThan(60);
      // Whole names and name prefixes among them: the three ranks' segments are walked, not only "contains".
      expect(ranked).toBeGreaterThan(15);
      // Phrases of two words (a run with a letter, a separator run, a run with a letter) from the pairs: whole names,
      // name starts, stretches from inside one word into the next, separators that differ from the name's; any other
      // phrase is not theirs.
      const phrases = new Set<string>(['eagle trucking', 'agle truck', 'bald eagle', 'eagle eagle', 'a-1 eagle', 'j b', 'b hunt']);
      for (const q of ['eagle  trucking', 'eagle-lines', 'eagle , inc', 'café express', 'fé exp', 'truck lines', 'zz qq', 'x9z eagle'])
        phrases.add(q);
      for (const [legal, dba] of carriers)
        for (const name of [legal, dba]) {
          if (!name) continue;
          const lc = name.trim().toLowerCase();
          const runs = [...lc.matchAll(/[a-z0-9]+/g)];
          for (let i = 0; i + 1 < runs.length; i++) {
            const [r1, r2] = [runs[i]!, runs[i + 1]!];
            const from = r1.index + Math.floor(rnd() * r1[0].length);
            const to = r2.index + 1 + Math.floor(rnd() * r2[0].length);
            phrases.add(lc.slice(r1.index, r2.index + r2[0].length));
            phrases.add(lc.slice(from, to));
          }
        }
      let pairs = 0;
      let pairRanked = 0;
      for (const name of phrases) {
        const p0 = { name, state: null, limit: 20, offset: 0 };
        if (!PAIR_PHRASE.test(name)) {
          // Without the names to check candidates against, the sets do not answer a longer phrase.
          if (isPhrase(name)) expect(nameSetsPage(roomy, roomy.finder, roomy.scratch, name, null, 20, 0), name).toBeNull();
          continue;
        }
        pairs++;
        if ((await scanPage(p0)).some((r) => r[1] !== 2)) pairRanked++;
        for (const [state, limit, offset] of [
          [null, 20, 0],
          [null, 4, 2],
          ['TX', 20, 0],
          [null, 10, 10_000],
        ] as const) {
          const p = { name, state, limit, offset };
          const scan = await scanPage(p);
          for (const sets of [roomy, tight]) expectScanPage(sets, p, scan);
        }
      }
      expect(pairs).toBeGreaterThan(100);
      expect(pairRanked).toBeGreaterThan(20);
      expect(tight.heldBytes).toBeLessThan(roomy.heldBytes);
      await store.close();
    } finally {
      await removeDir(dir);
    }
  });
  it("writes the same sets whether a term's postings are sorted or marked in bitmaps", async () => {
    // carrier-name-sets.ts setRecords: below nameSetsOptions.bitmapFrom postings a term's sets come from one sort of
    // its postings, from it on from three bitmaps; both encodings (list and bitmap) occur over these names.
    const order = (await readCarrierOrder(conn))!;
    const dir = await tempDir('name-sets-paths-');
    const saved = nameSetsOptions.bitmapFrom;
    try {
      const linesOf = async (bitmapFrom: number | null) => {
        nameSetsOptions.bitmapFrom = bitmapFrom;
        const at = path.join(dir, String(bitmapFrom));
        await mkdir(at, { recursive: true });
        await writePackedStore(conn, (await nameSetsBatchesInNode(conn, order))!, at, CARRIER_NAME_SETS);
        return (await readFile(path.join(at, `${CARRIER_NAME_SETS}.tsv`), 'utf8')).split('\n').sort();
      };
      const sorted = await linesOf(Number.POSITIVE_INFINITY);
      expect(sorted.some((l) => /\tB\d+:/.test(l)) && sorted.some((l) => /\tL\d+:/.test(l))).toBe(true);
      expect(await linesOf(0)).toEqual(sorted);
      expect(await linesOf(null)).toEqual(sorted);
      expect(await linesOf(3)).toEqual(sorted);
    } finally {
      nameSetsOptions.bitmapFrom = saved;
      await removeDir(dir);
    }
  });

  it("answers longer phrases (three runs or more, digits, trailing separators) from the sets and each candidate's names", async () => {
    /** A sets store of the carriers table as it is now, read through the route's cache (roomy and with room for none). */
    const storeOf = async (dir: string) => {
      await mkdir(dir, { recursive: true });
      await writePackedStore(conn, (await nameSetsBatchesInNode(conn, (await readCarrierOrder(conn))!))!, dir, CARRIER_NAME_SETS);
      const store = await PackedStore.open(dir, CARRIER_NAME_SETS);
      return { store, roomy: NameSetsCache.open(store)!, tight: NameSetsCache.open(store, 1)! };
    };
    // The names as the census serves them, by DOT (the DOTs the table was filled with).
    const byDot = new Map<number, readonly [string | null, string | null]>();
    carriers.forEach(([legal, dba], i) => {
      byDot.set(1000 + ((i * 7919) % 100_000), [legal, dba]);
    });
    let reads = 0;
    const namesOf = (dot: number) => {
      reads++;
      return byDot.get(dot) ?? null;
    };
    const dir = await tempDir('name-sets-long-');
    const queries = new Set<string>([
      'eagle trucking llc',
      'a-1 eagle, inc',
      'a-1 eagle,',
      'eagle,',
      'eagle ',
      'j b hunt',
      'j b hunt transport inc',
      '24/7 logistics',
      '24/7',
      'truck 24',
      'eagle eagle eagle',
      'zz qq xx',
      'eagle zzqx co',
      'a1 eagle',
      'x9z 24',
      '24',
      '47',
      '4 eagle',
    ]);
    for (const [legal, dba] of carriers)
      for (const name of [legal, dba]) {
        if (!name) continue;
        const lc = name.trim().toLowerCase();
        queries.add(lc);
        for (let i = 0; i < 3; i++) {
          const at = Math.floor(rnd() * lc.length);
          queries.add(lc.slice(at, at + 4 + Math.floor(rnd() * 16)).trimStart());
        }
      }
    await conn.run(`CREATE TABLE carriers_saved AS SELECT * FROM carriers`);
    try {
      // A name JS and DuckDB may lower-case apart (the Kelvin sign) is left to the SQL: null, not a guess.
      const all = await storeOf(path.join(dir, 'all'));
      expect(nameSetsPage(all.roomy, all.roomy.finder, all.roomy.scratch, 'kelvin king llc', null, 20, 0, namesOf)).toBeNull();
      await all.store.close();
      // ASCII names only: every longer phrase is answered, and as the scan answers it.
      await conn.run(`DELETE FROM carriers WHERE regexp_matches(coalesce(legal_name, '') || coalesce(dba_name, ''), '[^\\x00-\\x7f]')`);
      await deriveIndexTables(conn);
      const { store, roomy, tight } = await storeOf(path.join(dir, 'ascii'));
      expect(roomy.header.digit_firsts?.length).toBeGreaterThan(0);
      let answered = 0;
      let matched = 0;
      for (const name of queries) {
        if (name.length < 2 || INDEXED.test(name) || PAIR_PHRASE.test(name) || !/^[a-z0-9]/.test(name)) continue;
        for (const [state, limit, offset] of [
          [null, 20, 0],
          [null, 3, 1],
          ['TX', 20, 0],
        ] as const) {
          const p = { name, state, limit, offset };
          const scan = await scanPage(p);
          let none = false;
          for (const sets of [roomy, tight]) {
            const page = nameSetsPage(sets, sets.finder, sets.scratch, name, state, limit, offset, namesOf);
            // Only digits in one run (`24`, `24/`, open at its start) have nothing to narrow by.
            if (page === null && /^[0-9]+[^a-z0-9]*$/.test(name)) {
              none = true;
              continue;
            }
            expectScanPage(sets, p, scan, namesOf);
          }
          if (none) continue;
          answered++;
          if (scan.length) matched++;
        }
      }
      expect(answered).toBeGreaterThan(300);
      expect(matched).toBeGreaterThan(150);
      expect(reads).toBeGreaterThan(0);
      await store.close();
    } finally {
      await conn.run(`CREATE OR REPLACE TABLE carriers AS SELECT * FROM carriers_saved`);
      await conn.run(`DROP TABLE carriers_saved`);
      await deriveIndexTables(conn);
      await removeDir(dir);
    }
  });
  it('encodes a set as a list or a bitmap, whichever is smaller, and decodes it to the same ords', () => {
    const n = 100;
    const few = Uint32Array.from([0, 31, 32, 99]);
    const many = Uint32Array.from({ length: 60 }, (_, i) => i + 40);
    expect(encodeOrdSet(few, n)?.[0]).toBe('L');
    expect(encodeOrdSet(many, n)?.[0]).toBe('B');
    expect(encodeOrdSet(new Uint32Array(0), n)).toBeNull();
    expect([...decodeOrdSet(encodeOrdSet(few, n)!).list!]).toEqual([...few]);
    const bits = decodeOrdSet(encodeOrdSet(many, n)!);
    expect(bits.count).toBe(60);
    const back: number[] = [];
    for (let o = 0; o < n; o++) if ((bits.bits![o >>> 5]! >>> (o & 31)) & 1) back.push(o);
    expect(back).toEqual([...many]);
  });
});
