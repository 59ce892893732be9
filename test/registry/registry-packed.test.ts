/**
 * The registry's per-company packed stores (issue 22; jobs/registry/registry-packed.ts): every company route
 * answers the same bytes from the packed record as from its SQL (the path a snapshot without the stores takes),
 * for a third of the small sample's companies, across forms, pages and detail levels; and with the stores an answer
 * runs no DuckDB query but the memoised company lookup, nor does a person search or a search (the plan guard of
 * issue 22, no timing); the person-name index and the search's word indexes rank as the scans they replaced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { REGISTRY_PACKED } from '../../jobs/registry/registry-packed.ts';
import { REGISTRY_SIGNALS } from '../../jobs/registry/signals-packed.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { findLeaf } from '../../service/receipts/receipts.queries.ts';
import {
  getCompanyEarnings,
  getCompanyFilings,
  getCompanyPeople,
  getCompanyProfile,
  getCompanyTimeline,
  getPerson,
  listSignals,
  readPersonNames,
  SIGNAL_TYPES,
} from '../../service/registry-layers/registry-layers.queries.ts';
import { answer, counting, sqlOnly } from '../helpers/reader-variants.ts';
import { PersonNameIndex, scanPersonNames } from '../../service/registry-layers/person-name-index.ts';
import { companyIndex, rankCompanies, searchCompanyIndex } from '../../service/search/company-index.ts';
import { searchRegistry, tokenize } from '../../service/search/search.queries.ts';
import { searchEvents, searchPeople, textIndexes } from '../../service/search/text-index.ts';

/** The same reader as if it had no snapshot id: getPerson scans every people row in SQL (find-person.sql). */
function noSnapshotId(reader: SnapshotReader): SnapshotReader {
  const r = Object.create(reader) as SnapshotReader;
  Object.defineProperty(r, 'manifest', { value: null });
  return r;
}

describe('registry packed stores', () => {
  let dir: string;
  let reader: SnapshotReader;
  let tickers: string[];

  beforeAll(async () => {
    dir = await tempDir('proofline-registry-packed-');
    const input = `${dir}/input`;
    await ensureSample(input, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
    const config = testConfig(`${dir}/data`);
    await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir: input, force: true, backoffMs: 1, concurrency: 2 });
    reader = await SnapshotReader.open(`${dir}/data`, 'registry', { poolSize: 2 });
    tickers = (await reader.query(`SELECT ticker FROM company_lookup WHERE is_primary ORDER BY ticker`)).map((r) => String(r.ticker));
  }, 180_000);
  afterAll(async () => {
    await reader?.close();
    await removeDir(dir);
  });

  it('publishes one record per company with rows in each store', async () => {
    expect(Object.keys(reader.manifest?.packed ?? {}).sort()).toEqual(
      [...Object.keys(REGISTRY_PACKED), REGISTRY_SIGNALS, 'origin_leaves'].sort(),
    );
    const [{ n }] = await reader.query(`SELECT count(DISTINCT cik)::INTEGER AS n FROM filing_index WHERE cik IS NOT NULL`);
    expect(reader.packed('registry_filings')!.size).toBe(Number(n));
    expect(tickers.length).toBeGreaterThan(100);
  });

  it('answers every company route with the same bytes as the SQL path', async () => {
    const sql = sqlOnly(reader);
    let compared = 0;
    // Every third company (the SQL path is the slow one): about 100 companies, 1,200 answers.
    const some = tickers.filter((_, i) => i % 3 === 0);
    for (const t of some) {
      const calls: Array<(r: SnapshotReader) => Promise<unknown>> = [
        (r) => getCompanyEarnings(r, t),
        (r) => getCompanyEarnings(r, t, { limit: 3 }),
        (r) => getCompanyFilings(r, t),
        (r) => getCompanyFilings(r, t, { form: '10-K' }),
        (r) => getCompanyFilings(r, t, { form: '8-K', limit: 4 }),
        (r) => getCompanyFilings(r, t, { form: '10-q', limit: 2 }),
        (r) => getCompanyTimeline(r, t),
        (r) => getCompanyTimeline(r, t, { limit: 3, detail: 'full', origins: 'full' }),
        (r) => getCompanyProfile(r, t),
        (r) => getCompanyProfile(r, t, { detail: 'full', origins: 'full' }),
        (r) => getCompanyPeople(r, t),
        (r) => getCompanyPeople(r, t, { limit: 2 }),
      ];
      for (const call of calls) {
        expect(await answer(() => call(reader))).toBe(await answer(() => call(sql)));
        compared++;
      }
    }
    expect(compared).toBe(some.length * 12);
  }, 300_000);

  it('pages through the packed lists as through SQL (cursor and next)', async () => {
    const sql = sqlOnly(reader);
    const [{ ticker }] = await reader.query(
      `SELECT l.ticker FROM company_lookup l JOIN filing_index f ON f.cik = l.cik WHERE l.is_primary GROUP BY l.ticker ORDER BY count(*) DESC, l.ticker LIMIT 1`,
    );
    for (const [name, page] of [
      ['filings', (r: SnapshotReader, cursor?: string) => getCompanyFilings(r, String(ticker), { limit: 7, cursor })],
      ['timeline', (r: SnapshotReader, cursor?: string) => getCompanyTimeline(r, String(ticker), { limit: 7, cursor })],
      ['earnings', (r: SnapshotReader, cursor?: string) => getCompanyEarnings(r, String(ticker), { limit: 3, cursor })],
    ] as const) {
      let cursor: string | undefined;
      let pages = 0;
      do {
        const [a, b] = [await page(reader, cursor), await page(sql, cursor)];
        expect(JSON.stringify(a), `${name} page ${pages}`).toBe(JSON.stringify(b));
        cursor = (a.next_cursor as string | null) ?? undefined;
        pages++;
      } while (cursor && pages < 100);
      expect(pages, name).toBeGreaterThan(1);
    }
  });

  it('runs no DuckDB query for an answer once the company is known', async () => {
    const t = tickers[0]!;
    const { reader: r, count } = counting(reader);
    await getCompanyEarnings(r, t); // looks the company up once for this snapshot
    const before = count();
    await getCompanyEarnings(r, t);
    await getCompanyFilings(r, t, { form: '8-K' });
    await getCompanyTimeline(r, t, { limit: 5 });
    await getCompanyPeople(r, t);
    await getCompanyProfile(r, t, { detail: 'full' });
    expect(count() - before).toBe(0);
  });

  it('finds people by name from the in-memory name list and the packed person records as find-person.sql does (same answers, no query)', async () => {
    const sql = noSnapshotId(reader);
    const names = (await reader.query(`SELECT DISTINCT person_name FROM people ORDER BY hash(person_name) LIMIT 60`)).map((r) =>
      String(r.person_name),
    );
    const queries = [...new Set(names.flatMap((n) => [n, n.split(' ').at(-1)!, n.slice(0, 3), n.toUpperCase()]))].concat(['zzqx', 'an']);
    const byKey = sqlOnly(reader); // names in memory, roles by key with person-rows.sql
    for (const q of queries) {
      const expected = await answer(() => getPerson(sql, q));
      expect(await answer(() => getPerson(reader, q)), q).toBe(expected);
      expect(await answer(() => getPerson(byKey, q)), q).toBe(expected);
    }
    const { reader: r, count } = counting(reader);
    await getPerson(r, names[0]!); // reads the names and builds their index once for this snapshot
    const before = count();
    for (const q of queries) await answer(() => getPerson(r, q)); // every answer from the index and the packed records
    expect(count() - before).toBe(0);
  }, 120_000);
  it('finds the same person keys with the name index as with the scan of every name, over 1,000 queries drawn from the names', async () => {
    const entries = await readPersonNames(reader);
    const index = PersonNameIndex.build(entries);
    let seed = 22;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const queries = new Set(['zzqx', 'an', 'o', 'smith']);
    while (queries.size < 1000) {
      const name = entries[Math.floor(rand() * entries.length)]!.name;
      const from = Math.floor(rand() * name.length);
      queries.add(name);
      queries.add(name.split(' ').at(-1)!);
      queries.add(name.slice(from, from + 2 + Math.floor(rand() * 10)));
    }
    let found = 0;
    for (const q of queries) {
      const expected = [...scanPersonNames(entries, q, 200)];
      expect([...index.match(q, 200)], q).toEqual(expected);
      if (expected.length > 0) found++;
    }
    expect(found).toBeGreaterThan(900);
  }, 120_000);

  it('ranks search results through the word indexes as the scan of every document does, with no DuckDB query per search', async () => {
    const [companies, text] = await Promise.all([companyIndex(reader), textIndexes(reader)]);
    const words = (
      await reader.query(`SELECT w FROM (SELECT DISTINCT split_part(name, ' ', 1) AS w FROM company_lookup) ORDER BY hash(w) LIMIT 150`)
    ).map((r) => String(r.w));
    const people = text.people.filter((_, i) => i % 37 === 0).map((p) => p.name);
    const titles = text.events.filter((_, i) => i % 97 === 0).map((e) => e.title.split(' ').slice(0, 2).join(' '));
    const queries = [...new Set([...words, ...people, ...titles, 'inc', 'director', 'ceo apple', 'a', 'zzqx'])];
    let found = 0;
    for (const query of queries) {
      const q = query.trim().toLowerCase();
      const tokens = tokenize(q);
      if (tokens.length === 0) continue;
      for (const limit of [1, 10, 50]) {
        const c = [{ total: 0 }, { total: 0 }, { total: 0 }, { total: 0 }, { total: 0 }, { total: 0 }];
        const scanned = companies.filter((x) => tokens.every((t) => x.hay.includes(t)));
        expect(searchCompanyIndex(companies, q, tokens, limit, c[0]), q).toEqual(rankCompanies(scanned, q, tokens, limit, c[1]));
        const p = searchPeople(text.people, q, tokens, limit, text.peopleWords, c[2], text.peopleNameWords);
        expect(p, q).toEqual(searchPeople(text.people, q, tokens, limit, undefined, c[3]));
        const e = searchEvents(text.events, q, tokens, limit, text.eventWords, c[4], text.eventTitleWords);
        expect(e, q).toEqual(searchEvents(text.events, q, tokens, limit, undefined, c[5]));
        expect([c[0]!.total, c[2]!.total, c[4]!.total], q).toEqual([c[1]!.total, c[3]!.total, c[5]!.total]);
        if (p.length > 0 && e.length > 0) found++;
      }
    }
    expect(found).toBeGreaterThan(30); // most queries find people and events: the comparison is not vacuous
    const { reader: r, count } = counting(reader);
    await searchRegistry(r, { q: words[0]!, limit: 10 }, 'http://proofline.test'); // builds the indexes for this reader
    const before = count();
    for (const q of queries.slice(0, 50)) await searchRegistry(r, { q, limit: 10 }, 'http://proofline.test');
    expect(count() - before).toBe(0);
  }, 120_000);

  it('answers signal searches by ticker with the same bytes as the SQL path: types, strengths, limits, pages, other filters', async () => {
    const sql = sqlOnly(reader);
    const withHits = (await reader.query(`SELECT DISTINCT ticker FROM signal_hits WHERE ticker IS NOT NULL ORDER BY ticker`)).map((r) =>
      String(r.ticker),
    );
    expect(withHits.length).toBeGreaterThan(20);
    let seed = 22;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    let nonEmpty = 0;
    for (let i = 0; i < 300; i++) {
      const t = i < withHits.length ? withHits[i]! : pick([...withHits, ...tickers, 'NOPE', 'brk.b']);
      const q = {
        ticker: rnd() < 0.2 ? t.toLowerCase() : t,
        type: rnd() < 0.3 ? pick(SIGNAL_TYPES) : undefined,
        min_strength: rnd() < 0.3 ? pick([1, 2, 3]) : undefined,
        limit: rnd() < 0.4 ? pick([1, 2, 5, 50, 200]) : undefined,
        ...(rnd() < 0.1 ? { exchange: 'nasdaq' } : {}),
        ...(rnd() < 0.1 ? { type: pick(SIGNAL_TYPES), also: pick(SIGNAL_TYPES) } : {}),
      };
      let cursor: string | undefined;
      for (let page = 0; page < 4; page++) {
        const got = await answer(() => listSignals(reader, { ...q, cursor }));
        const want = await answer(() => listSignals(sql, { ...q, cursor }));
        expect(got, JSON.stringify(q)).toBe(want);
        if (!got.startsWith('{')) break;
        const parsed = JSON.parse(got) as { total: number; next_cursor: string | null };
        if (parsed.total > 0) nonEmpty++;
        cursor = parsed.next_cursor ?? undefined;
        if (!cursor) break;
      }
    }
    expect(nonEmpty).toBeGreaterThan(100);
  });

  it('answers a signal search by ticker (with type and strength) with no DuckDB query', async () => {
    const [{ ticker }] = await reader.query(
      `SELECT ticker FROM signal_hits WHERE ticker IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
    );
    const c = counting(reader);
    const first = (await listSignals(c.reader, { ticker: String(ticker), limit: 2 })) as { total: number; next_cursor: string | null };
    expect(first.total).toBeGreaterThan(2);
    await listSignals(c.reader, { ticker: String(ticker), limit: 2, cursor: first.next_cursor ?? undefined });
    await listSignals(c.reader, { ticker: String(ticker), type: SIGNAL_TYPES[0], min_strength: 2 });
    await listSignals(c.reader, { ticker: 'NOPE' });
    expect(c.count()).toBe(0);
  });

  it('finds every origin leaf (and misses) in the leaf store as the origin_leaves query does, with no DuckDB query', async () => {
    // The leaf store (lib/warehouse/publish.ts writeLeafStore) serves /api/verify's lookups and chain walks. Every leaf
    // is compared with its row read in one query of FIND_LEAF's columns; a sample of them, and the misses, with
    // findLeaf's own SQL path (one query per hash: all of them took 87–120 s on a slowed host).
    const sql = sqlOnly(reader);
    const rows = await reader.query(
      `SELECT leaf_hash, 'sha256' AS alg, 'rfc8785' AS canon, kind, source, source_url, retrieved_at,
         content_sha256, record_sha256, parent, table_name
       FROM origin_leaves ORDER BY leaf_hash`,
    );
    const byHash = new Map<string, string>();
    for (const { table_name, ...leaf } of rows)
      if (!byHash.has(String(leaf.leaf_hash)))
        byHash.set(String(leaf.leaf_hash), JSON.stringify({ leaf, domain: 'registry', table_name: table_name ?? null }));
    const hashes = [...byHash.keys()];
    expect(hashes.length).toBeGreaterThan(1000);
    expect(reader.packed('origin_leaves')!.size).toBeGreaterThan(0);
    for (const h of hashes) expect(JSON.stringify(await findLeaf({ registry: reader }, h)), h).toBe(byHash.get(h));
    const flip = (h: string) => h.slice(0, 63) + (h[63] === '0' ? '1' : '0');
    const step = Math.ceil(hashes.length / 300);
    const probes = [
      ...hashes.filter((_, i) => i % step === 0),
      hashes.at(-1)!,
      ...hashes.slice(0, 200).map(flip),
      'f'.repeat(64),
      'not-a-hash',
    ];
    for (const h of probes)
      expect(JSON.stringify(await findLeaf({ registry: reader }, h)), h).toBe(JSON.stringify(await findLeaf({ registry: sql }, h)));
    const { reader: r, count } = counting(reader);
    for (const h of hashes.slice(0, 50)) await findLeaf({ registry: r }, h);
    await findLeaf({ registry: r }, 'f'.repeat(64));
    expect(count()).toBe(0);
  });
});
