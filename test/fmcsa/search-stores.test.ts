/**
 * The packed stores of the search-like FMCSA routes (issue 22 item 2): red-flag lists per filter
 * (jobs/fmcsa/red-flag-store.ts). Every answer equals, byte for byte, the one of the SQL it replaces (the scan of
 * carrier_risk) over many random filters, pages followed by cursor; and with the stores
 * published an answer runs no DuckDB query. No timings: speed is `npm run bench -- endpoints`.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nameHitsOptions } from '../../jobs/fmcsa/carrier-name-index.ts';
import { docketPasses } from '../../jobs/fmcsa/docket-store.ts';
import { redFlagPasses } from '../../jobs/fmcsa/red-flag-store.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { RED_FLAG_CODES, SAFETY_RATINGS, searchCarriers, searchRedFlags } from '../../service/carriers/carriers.queries.ts';
import { buildTestService, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';
import { CARRIER_SEARCH_ROW } from '../../ingest/fmcsa/search-store-keys.ts';
import { Rng } from '../../ingest/sample/sample-kit.ts';

const RED_FLAG_STORES = ['red_flag_lists', 'red_flag_row'];
const STORES = [...RED_FLAG_STORES, 'carrier_name_hits', 'carrier_by_docket', CARRIER_SEARCH_ROW];

/**
 * The same reader with the packed search stores hidden (and, with `scan`, the name index tables too): the SQL
 * answers (the name index SQL, or the scan of carriers; red flags the scan of carrier_risk either way).
 */
function withoutStores(r: SnapshotReader, scan: boolean): SnapshotReader {
  const manifest = r.manifest && scan ? { ...r.manifest, tables: { ...r.manifest.tables, carrier_name_terms: undefined } } : r.manifest;
  return Object.create(r, {
    // The scan reader hides the census store too, so that a DOT lookup runs search-carriers-page.sql.
    packed: { value: (name: string) => (STORES.includes(name) || (scan && name === 'carrier_census') ? null : r.packed(name)) },
    manifest: { value: manifest },
  }) as SnapshotReader;
}

// In one pass (the default at this size), and in passes of 2,000 red-flag entries and 1,000 name postings (several, as
// at full scale), with every term of 2 postings or more answered from the store.
describe.each([
  ['one pass', redFlagPasses.entries, nameHitsOptions],
  ['passes', 2_000, { minPostings: 2, passPostings: 1_000 }],
])('FMCSA search stores over a generated sample, %s', (_name, entries, nameOptions) => {
  let root: string;
  let svc: TestService;
  let fmcsa: SnapshotReader;
  let indexSql: SnapshotReader;
  let scanSql: SnapshotReader;
  const rng = new Rng(22);
  const rnd = () => rng.next();
  const pick = <T>(xs: readonly T[]): T => rng.pick(xs);

  /** The answers of `asks`, run with no DuckDB query, each equal to the scan's answer (asserted); as JSON texts. */
  async function answersWithoutQueryAsScan(asks: Array<Parameters<typeof searchCarriers>[1]>): Promise<string[]> {
    const query = vi.spyOn(fmcsa, 'query');
    query.mockClear();
    const got: string[] = [];
    try {
      for (const q of asks) got.push(JSON.stringify(await searchCarriers(fmcsa, q)));
      expect(query).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
    }
    for (const [i, q] of asks.entries()) expect(got[i], JSON.stringify(q)).toBe(JSON.stringify(await searchCarriers(scanSql, q)));
    return got;
  }

  beforeAll(async () => {
    root = await tempDir('fmcsa-search-stores-');
    const saved = redFlagPasses.entries;
    const savedDockets = docketPasses.rows;
    const savedName = { ...nameHitsOptions };
    redFlagPasses.entries = entries;
    if (entries < saved) docketPasses.rows = 500;
    Object.assign(nameHitsOptions, nameOptions);
    const config = await ingestSmallFmcsa(root, path.join(root, 'data'), {}, 3000).finally(() => {
      redFlagPasses.entries = saved;
      docketPasses.rows = savedDockets;
      Object.assign(nameHitsOptions, savedName);
    });
    svc = await buildTestService(config, ['fmcsa']);
    fmcsa = svc.deps.readers.fmcsa!;
    indexSql = withoutStores(fmcsa, false);
    scanSql = withoutStores(fmcsa, true);
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  it('publishes the search stores', () => {
    for (const s of STORES) expect(fmcsa.packed(s), s).not.toBeNull();
  });

  it('answers name searches as the SQL does: every word, fragments, states, limits, offsets and pages by cursor', async () => {
    const words = (await fmcsa.query(`SELECT DISTINCT term FROM carrier_name_dict WHERE length(term) >= 2 ORDER BY term`)).map((r) =>
      String(r.term),
    );
    const states = (await fmcsa.query(`SELECT DISTINCT phy_state AS s FROM carriers WHERE phy_state IS NOT NULL`)).map((r) => String(r.s));
    expect(words.length).toBeGreaterThan(10);
    const queries = [
      ...words,
      ...words.map((w) => w.slice(0, 3)),
      ...words.map((w) => w.slice(1, 5)),
      'Eagle',
      ' TRUCKING ',
      'zzqx',
    ].filter((w) => w.trim().length >= 2);
    let fromStore = 0;
    for (let i = 0; i < 160; i++) {
      const name = i < words.length ? words[i]! : pick(queries);
      const q = {
        name,
        state: rnd() < 0.4 ? pick([...states, 'ZZ']) : undefined,
        limit: rnd() < 0.5 ? pick([1, 5, 20, 99, 100, 150]) : undefined,
        offset: rnd() < 0.3 ? pick([0, 1, 19, 150, 199, 200, 201, 399, 1_000, 5_000]) : undefined,
      };
      let cursor: string | undefined;
      for (let page = 0; page < 3; page++) {
        const query = vi.spyOn(fmcsa, 'query');
        query.mockClear();
        const got = JSON.stringify(await searchCarriers(fmcsa, { ...q, cursor }));
        if (query.mock.calls.length === 0) fromStore++;
        query.mockRestore();
        expect(got, JSON.stringify(q)).toBe(JSON.stringify(await searchCarriers(indexSql, { ...q, cursor })));
        const want = await searchCarriers(scanSql, { ...q, cursor });
        expect(got, JSON.stringify(q)).toBe(JSON.stringify(want));
        cursor = want.next_cursor ?? undefined;
        if (!cursor) break;
      }
    }
    expect(fromStore).toBeGreaterThan(100);
  });

  it('answers DOT lookups as the SQL does: known and unknown DOTs, with a state, offsets; with no DuckDB query', async () => {
    const dots = (await fmcsa.query(`SELECT dot_number, phy_state FROM carriers ORDER BY hash(dot_number) LIMIT 60`)).map(
      (r): [number, string | null] => [Number(r.dot_number), r.phy_state as string | null],
    );
    // The snapshot's metadata (column names, dataset status) is read once per snapshot, before.
    await searchCarriers(fmcsa, { dot: dots[0]![0] });
    const asks: Array<Parameters<typeof searchCarriers>[1]> = [];
    for (const [dot, st] of dots) {
      asks.push(
        { dot: dot! },
        { dot: String(dot) },
        { dot: dot!, state: st ?? 'TX' },
        { dot: dot!, state: 'ZZ' },
        { dot: dot!, offset: 1 },
      );
      asks.push({ dot, limit: 1, state: st?.toLowerCase() ?? undefined });
    }
    asks.push({ dot: 99_999_999 }, { dot: 1 });
    const got = await answersWithoutQueryAsScan(asks);
    expect(got.filter((g) => g.includes('"total":1')).length).toBeGreaterThan(100);
  });

  it("gives every carrier's search row from the search-row store as the census and snapshot stores give it, and as the SQL does", async () => {
    const rowStore = fmcsa.packed(CARRIER_SEARCH_ROW);
    expect(rowStore).not.toBeNull();
    // The same reader without the search-row store: a row is read from the census and snapshot stores.
    const twoStores = Object.create(fmcsa, {
      packed: { value: (name: string) => (name === CARRIER_SEARCH_ROW ? null : fmcsa.packed(name)) },
    }) as SnapshotReader;
    const dots = (await fmcsa.query(`SELECT dot_number FROM carriers ORDER BY dot_number`)).map((r) => Number(r.dot_number));
    expect(rowStore!.size).toBe(dots.length);
    let withRisk = 0;
    for (const dot of dots) {
      const got = await searchCarriers(fmcsa, { dot });
      expect(JSON.stringify(got), String(dot)).toBe(JSON.stringify(await searchCarriers(twoStores, { dot })));
      if (got.results[0]?.risk_level != null) withRisk++;
    }
    expect(withRisk).toBe(dots.length);
    // And a sample against the scan of carriers joined to carrier_risk.
    await answersWithoutQueryAsScan(dots.filter((_, i) => i % 50 === 0).map((dot) => ({ dot })));
  });

  it('answers MC docket lookups as the SQL does: dockets of any column, unknown ones, states, offsets; with no DuckDB query', async () => {
    const dockets = (
      await fmcsa.query(
        `SELECT DISTINCT d FROM (SELECT unnest([docket1, docket2, docket3]) AS d FROM carriers) WHERE d IS NOT NULL ORDER BY hash(d) LIMIT 80`,
      )
    ).map((r) => String(r.d));
    expect(dockets.length).toBeGreaterThan(40);
    await searchCarriers(fmcsa, { mc: dockets[0]! });
    const asks: Array<Parameters<typeof searchCarriers>[1]> = [];
    for (const mc of dockets) asks.push({ mc }, { mc: mc.toLowerCase() }, { mc, state: 'TX' }, { mc, offset: 1 }, { mc, limit: 1 });
    asks.push({ mc: 'MC99999999' }, { mc: '1' });
    const got = await answersWithoutQueryAsScan(asks);
    expect(got.filter((g) => !g.includes('"total":0')).length).toBeGreaterThan(100);
  });

  it('answers a search of every indexed word with no DuckDB query: every state, first and later pages', async () => {
    const words = (
      await fmcsa.query(
        `SELECT DISTINCT term FROM carrier_name_terms WHERE length(term) >= 2 GROUP BY term HAVING count(*) >= ${nameOptions.minPostings}`,
      )
    ).map((r) => String(r.term));
    expect(words.length).toBeGreaterThan(10);
    // The snapshot's metadata (column names, dataset status) is read once per snapshot, before.
    await searchCarriers(fmcsa, { name: words[0]! });
    const query = vi.spyOn(fmcsa, 'query');
    query.mockClear();
    try {
      for (const name of words) {
        const first = await searchCarriers(fmcsa, { name });
        expect(first.total).toBeGreaterThan(0);
        await searchCarriers(fmcsa, { name, state: 'TX', limit: 100, offset: 150 });
        if (first.next_cursor) await searchCarriers(fmcsa, { name, cursor: first.next_cursor });
      }
      expect(query).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
    }
  });

  it('answers red-flag searches as the SQL does: every filter, min_risk, limits and pages by cursor', async () => {
    const states = (await fmcsa.query(`SELECT DISTINCT phy_state AS s FROM carrier_risk WHERE phy_state IS NOT NULL`)).map((r) =>
      String(r.s),
    );
    const scores = (
      await fmcsa.query(`SELECT risk_score AS s FROM carrier_risk WHERE len(red_flag_codes) > 0 ORDER BY hash(dot_number) LIMIT 8`)
    ).map((r) => Number(r.s));
    const minRisks = [undefined, 0, 1, 10, 25.5, 50, 99.9, 100, 'HIGH', 'MODERATE', 'critical', 'LOW', ...scores];
    let nonEmpty = 0;
    for (let i = 0; i < 220; i++) {
      const q = {
        code: rnd() < 0.6 ? pick(RED_FLAG_CODES) : undefined,
        state: rnd() < 0.5 ? pick([...states, 'ZZ', 'tx']) : undefined,
        min_risk: rnd() < 0.5 ? pick(minRisks) : undefined,
        safety_rating: rnd() < 0.3 ? pick([...SAFETY_RATINGS, 'satisfactory']) : undefined,
        limit: rnd() < 0.5 ? pick([1, 3, 7, 50, 499, 500, 1000]) : undefined,
      };
      let cursor: string | undefined;
      for (let page = 0; page < 4; page++) {
        const got = JSON.stringify(await searchRedFlags(fmcsa, { ...q, cursor }));
        expect(got, JSON.stringify(q)).toBe(JSON.stringify(await searchRedFlags(indexSql, { ...q, cursor })));
        const want = await searchRedFlags(scanSql, { ...q, cursor });
        expect(got, JSON.stringify(q)).toBe(JSON.stringify(want));
        if (want.total > 0) nonEmpty++;
        cursor = want.next_cursor ?? undefined;
        if (!cursor) break;
      }
    }
    expect(nonEmpty).toBeGreaterThan(100);
  });

  it('answers every red-flag search with no DuckDB query', async () => {
    const query = vi.spyOn(fmcsa, 'query');
    query.mockClear();
    try {
      for (const q of [{}, { code: RED_FLAG_CODES[0] }, { state: 'TX', min_risk: 'HIGH' }, { safety_rating: 'C', limit: 500 }]) {
        const first = await searchRedFlags(fmcsa, q);
        if (first.next_cursor) await searchRedFlags(fmcsa, { ...q, cursor: first.next_cursor });
      }
      expect(query).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
    }
  });
});
