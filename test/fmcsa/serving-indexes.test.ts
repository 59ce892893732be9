/**
 * The lookup structures built at FMCSA publish for the search-like routes (issue 22): answers identical to the
 * scans they replace, and plans that read a range instead of scanning (asserted on EXPLAIN, never timed).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadSql, type Params } from '../../lib/warehouse/duckdb.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { getCarrier, searchCarriers, searchRedFlags } from '../../service/carriers/carriers.queries.ts';
import { buildTestService, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';
import { CARRIER_SEARCH_ROW } from '../../ingest/fmcsa/search-store-keys.ts';

const CARRIERS = 3000;
const sql = (f: string) => loadSql(`../../service/carriers/${f}`, import.meta.url);

/** The physical plan of `query` as text (EXPLAIN, not run). */
async function planOf(r: SnapshotReader, query: string, params: Params): Promise<string> {
  const rows = await r.query(`EXPLAIN ${query}`, params);
  return rows.map((x) => String(x.explain_value)).join('\n');
}

describe('FMCSA serving indexes over a generated sample', () => {
  let root: string;
  let svc: TestService;
  let fmcsa: SnapshotReader;

  beforeAll(async () => {
    root = await tempDir('fmcsa-idx-');
    const config = await ingestSmallFmcsa(root, path.join(root, 'data'), {}, CARRIERS);
    svc = await buildTestService(config, ['fmcsa']);
    fmcsa = svc.deps.readers.fmcsa!;
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await removeDir(root);
  });

  describe('red flags from the packed red-flag stores', () => {
    it('answers every filter exactly as the scan of carrier_risk does (rows, order, total)', async () => {
      const [{ code, state }] = await fmcsa.query(
        `SELECT code, state FROM (SELECT unnest(red_flag_codes) AS code, phy_state AS state FROM carrier_risk WHERE phy_state IS NOT NULL)
         GROUP BY ALL ORDER BY count(*) DESC, code, state LIMIT 1`,
      );
      type Filter = { code?: string; state?: string; min_risk?: number; safety_rating?: string };
      const filters: Filter[] = [
        {},
        { code: String(code) },
        { state: String(state) },
        { code: String(code), state: String(state) },
        { min_risk: 40 },
        { code: String(code), min_risk: 30 },
        { safety_rating: 'C' },
        { state: String(state), safety_rating: 'S', min_risk: 10 },
      ];
      const scanOf = (f: Filter, limit: number, offset: number) =>
        fmcsa.query(sql('search-red-flags.sql'), {
          code: f.code ?? null,
          state: f.state ?? null,
          min_risk: f.min_risk ?? null,
          safety_rating: f.safety_rating ?? null,
          limit,
          offset,
        });
      // The stores alone serve the route: no table duplicates them (fmcsa-v5).
      expect(fmcsa.manifest?.tables.red_flag_index).toBeUndefined();
      expect(fmcsa.manifest?.tables.red_flag_rows).toBeUndefined();
      expect(fmcsa.packed('red_flag_lists')).not.toBeNull();
      for (const f of filters) {
        // The route's answer (first page) against the scan.
        const got = await searchRedFlags(fmcsa, { ...f, limit: 50 });
        const scan = await scanOf(f, 50, 0);
        expect(got.results).toEqual(scan.map(({ total: _t, ...r }) => r));
        expect(got.total).toBe(scan.length ? Number(scan[0].total) : 0);
      }
    });
  });
  describe('carrier identity from the packed census store', () => {
    it('is byte for byte the answer of the SQL join of carriers, carrier_risk, authority and insurance', async () => {
      expect(fmcsa.packed('carrier_census')).not.toBeNull();
      const dots = await fmcsa.query(
        `SELECT dot_number FROM carriers ORDER BY (docket2 IS NOT NULL) DESC, (mcs150_mileage IS NOT NULL) DESC, hash(dot_number) LIMIT 60`,
      );
      for (const { dot_number } of dots) {
        const dot = Number(dot_number);
        const [row] = await fmcsa.query(sql('get-carrier.sql'), { dot });
        const authority = await fmcsa.query(
          `SELECT * EXCLUDE (source_file) FROM authority WHERE dot_number = $dot ORDER BY docket_number`,
          { dot },
        );
        const insurance = await fmcsa.query(sql('get-insurance.sql'), { dot });
        expect(JSON.stringify(await getCarrier(fmcsa, dot))).toBe(JSON.stringify({ ...row, authority, insurance }));
      }
      await expect(getCarrier(fmcsa, 99_999_999)).rejects.toMatchObject({ httpStatus: 404 });
    });
  });
  describe('carrier search with the risk columns from the packed store', () => {
    it('is byte for byte the answer of the join to carrier_risk, for names, states, DOTs, dockets and pages', async () => {
      const [c] = await fmcsa.query(
        `SELECT dot_number, legal_name, phy_state, docket1 FROM carriers WHERE docket1 IS NOT NULL ORDER BY hash(dot_number) LIMIT 1`,
      );
      const word = String(c.legal_name).split(' ')[0]!.toLowerCase();
      const queries = [
        { name: word },
        { name: String(c.legal_name).toLowerCase() },
        { name: word.slice(1, 4), state: String(c.phy_state) },
        { state: String(c.phy_state), limit: 7, offset: 5 },
        { dot: Number(c.dot_number) },
        { mc: String(c.docket1) },
        { name: 'zzqx-no-such-name' },
        { name: word, offset: 100_000 },
      ];
      for (const q of queries) {
        const got = await searchCarriers(fmcsa, q);
        const name = q.name?.trim().toLowerCase() ?? null;
        const rows = await fmcsa.query(sql('search-carriers.sql'), {
          dot: q.dot ?? null,
          mc: q.mc ?? null,
          name,
          state: q.state ?? null,
          limit: q.limit ?? 20,
          offset: q.offset ?? 0,
        });
        expect(JSON.stringify(got.results)).toBe(JSON.stringify(rows.map(({ total: _t, rank: _r, ...r }) => r)));
        expect(got.total).toBe(rows.length ? Number(rows[0].total) : 0);
      }
    });

    it('reads carriers alone: no join to carrier_risk', async () => {
      const plan = await planOf(fmcsa, sql('search-carriers-page.sql'), {
        dot: null,
        mc: null,
        name: 'trans',
        state: null,
        limit: 20,
        offset: 0,
      });
      expect(plan).toMatch(/READ_PARQUET|TABLE_SCAN/);
      expect(plan).not.toMatch(/carrier_risk|JOIN/);
    });
  });

  describe('carrier search by name through the name index', () => {
    const scanOf = async (q: { name: string; state?: string; limit?: number; offset?: number }) => {
      const rows = await fmcsa.query(sql('search-carriers.sql'), {
        dot: null,
        mc: null,
        name: q.name.trim().toLowerCase(),
        state: q.state ?? null,
        limit: q.limit ?? 20,
        offset: q.offset ?? 0,
      });
      return { total: rows.length ? Number(rows[0].total) : 0, results: rows.map(({ total: _t, rank: _r, ...r }) => r) };
    };

    it('answers random names drawn from the sample byte for byte as the scan of every name does', async () => {
      const names = (await fmcsa.query(`SELECT legal_name FROM carriers ORDER BY hash(dot_number) LIMIT 40`)).map((r) =>
        String(r.legal_name),
      );
      let seed = 7;
      const rnd = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed / 2_147_483_648;
      };
      const queries: Array<{ name: string; state?: string; limit?: number; offset?: number }> = [];
      for (const n of names) {
        const words = n.split(' ');
        const w = words[Math.floor(rnd() * words.length)]!;
        const at = Math.floor(rnd() * Math.max(1, w.length - 2));
        queries.push(
          { name: w }, // a word (letters, or the sample's DOT-like number)
          { name: w.slice(0, 2 + Math.floor(rnd() * 4)) }, // a prefix
          { name: w.slice(at, at + 3) }, // an inner fragment
          { name: w.toLowerCase().replace(/^./, (c) => c.toUpperCase()) }, // mixed case
          { name: n }, // the whole name, its number included (a phrase: the index)
          { name: words.slice(0, 2).join(' ') }, // its first two words
          { name: n.slice(2, n.lastIndexOf(' ') - 1) }, // from inside its first word to inside its last lettered one
          { name: words.slice(-2).join(' ') }, // a word and the number (the scan when the word is the number)
          { name: n.slice(0, -2) }, // the whole name but its number's last two digits: a prefix of many numbers
          { name: `${w},` }, // a trailing separator (the index unless the word is the number)
          { name: `-${w}` }, // a leading separator (the scan)
          { name: `  ${w.slice(0, 3)} ` }, // surrounding spaces, trimmed
          { name: w, state: 'TX', limit: 7, offset: 3 },
        );
      }
      queries.push({ name: 'zzqx' }, { name: 'xq' }, { name: 'e' }, { name: 'ea', offset: 100_000 }, { name: 'trucking', limit: 100 });
      const spy = vi.spyOn(fmcsa, 'query');
      let indexed = 0;
      let phrases = 0;
      try {
        for (const q of queries) {
          const name = q.name.trim().toLowerCase();
          if (name.length < 2) {
            await expect(searchCarriers(fmcsa, q)).rejects.toMatchObject({ httpStatus: 400 });
            continue;
          }
          spy.mockClear();
          const got = await searchCarriers(fmcsa, q);
          // Through the index: its SQL, or the packed answers of frequent words built from it (no scan of carriers).
          const scanned = spy.mock.calls.some(([text]) => /FROM carriers c\b/.test(text));
          const viaIndex = !scanned;
          const word = /^[a-z0-9]*[a-z][a-z0-9]*$/.test(name);
          const phrase = /^[a-z0-9]*[a-z][a-z0-9]*[^a-z0-9]/.test(name);
          // A name of letters reads the index; one without a letter may still be narrowed by its state and numbers
          // (the sets store, each candidate's names checked) or else scans.
          if (word || phrase) expect(viaIndex, q.name).toBe(true);
          if (phrase) phrases++;
          if (viaIndex) indexed++;
          const scan = await scanOf(q);
          expect(JSON.stringify(got.results), JSON.stringify(q)).toBe(JSON.stringify(scan.results));
          expect(got.total, JSON.stringify(q)).toBe(scan.total);
        }
      } finally {
        spy.mockRestore();
      }
      expect(indexed).toBeGreaterThan(100);
      expect(phrases).toBeGreaterThan(40);
    });

    it('falls back to the scan when a row of the page is missing from the packed row stores (a snapshot swap between reads)', async () => {
      // The rows of a page come from carrier_search_row, or, in a snapshot without it, from the census store; each
      // page's rows are read in one synchronous pass (PackedStore.read).
      const withoutSearchRows = Object.create(fmcsa, {
        packed: { value: (name: string) => (name === CARRIER_SEARCH_ROW ? null : fmcsa.packed(name)) },
      }) as SnapshotReader;
      const scan = await scanOf({ name: 'trucking' });
      for (const [reader, storeName] of [
        [fmcsa, CARRIER_SEARCH_ROW],
        [withoutSearchRows, 'carrier_census'],
      ] as const) {
        const store = fmcsa.packed(storeName)!;
        const get = vi.spyOn(store, 'read').mockReturnValueOnce(null);
        try {
          const got = await searchCarriers(reader, { name: 'trucking' });
          expect(get, storeName).toHaveBeenCalled();
          expect(JSON.stringify(got.results), storeName).toBe(JSON.stringify(scan.results));
          expect(got.total).toBe(scan.total);
        } finally {
          get.mockRestore();
        }
      }
    });

    it('answers parts of words and two-word phrases (any state, any page) from the sets store, with no DuckDB query', async () => {
      expect(fmcsa.packed('carrier_name_sets')).not.toBeNull();
      const [{ legal_name }] = await fmcsa.query(`SELECT legal_name FROM carriers ORDER BY hash(dot_number) LIMIT 1`);
      const word = String(legal_name).toLowerCase().split(' ')[0]!;
      const queries = [
        { name: word.slice(1, 4) },
        { name: word.slice(0, 3), state: 'TX' },
        { name: 'ucki', limit: 50, offset: 7 },
        { name: 'zzqx' },
        { name: word.slice(-3), offset: 40, limit: 100 },
        { name: String(legal_name).split(' ').slice(0, 2).join(' ') },
        { name: `${word.slice(2)} ${String(legal_name).toLowerCase().split(' ')[1]!.slice(0, 3)}`, state: 'TX' },
        { name: `${word}-zz` },
      ];
      await searchCarriers(fmcsa, queries[0]!); // the snapshot's cached metadata, read once per snapshot
      const spy = vi.spyOn(fmcsa, 'query');
      try {
        for (const q of queries) {
          spy.mockClear();
          const got = await searchCarriers(fmcsa, q);
          expect(spy, JSON.stringify(q)).not.toHaveBeenCalled();
          const scan = await scanOf(q);
          expect(JSON.stringify(got.results), JSON.stringify(q)).toBe(JSON.stringify(scan.results));
          expect(got.total, JSON.stringify(q)).toBe(scan.total);
        }
      } finally {
        spy.mockRestore();
      }
    });

    it('reads a phrase from the index, not carriers: the postings of its first word alone', async () => {
      const [{ legal_name }] = await fmcsa.query(`SELECT legal_name FROM carriers ORDER BY hash(dot_number) LIMIT 1`);
      const name = String(legal_name).toLowerCase().split(' ').slice(0, 2).join(' ');
      const params = { name, state: null, limit: 20, offset: 0 };
      const [{ explain_value: json }] = await fmcsa.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql('search-carriers-by-phrase.sql')}`, params);
      type Op = { operator_type?: string; operator_cardinality?: number; extra_info?: Record<string, unknown>; children?: Op[] };
      const ops: Op[] = [];
      const walk = (o: Op) => {
        ops.push(o);
        for (const c of o.children ?? []) walk(c);
      };
      walk(JSON.parse(String(json)) as Op);
      const info = (o: Op) => JSON.stringify(o.extra_info ?? {});
      // Neither carriers (legal_name) nor carrier_risk is read; one postings scan (the table with `tail`), which
      // gets the dictionary's terms ending with the first word as a filter (row groups of other terms are skipped by
      // their min/max) and returns their rows alone, not the whole table.
      expect(ops.map(info).join('\n')).not.toMatch(/legal_name|risk_score/);
      const first = name.split(' ')[0]!;
      const [{ postings, all }] = await fmcsa.query(
        `SELECT count(*) FILTER (WHERE ends_with(term, $first))::INTEGER AS postings, count(*)::INTEGER AS all FROM carrier_name_terms`,
        { first },
      );
      expect(Number(postings)).toBeLessThan(Number(all) / 2);
      const scans = ops.filter((o) => o.operator_type === 'TABLE_SCAN' && /\btail\b/.test(info(o)));
      expect(scans.length).toBe(1);
      expect(JSON.stringify(scans[0]!.extra_info?.['Dynamic Filters'] ?? '')).toMatch(new RegExp(`term( IN \\(|=)[^"]*'${first}'`));
      expect(scans[0]!.operator_cardinality).toBeLessThanOrEqual(Number(postings));
      const got = await searchCarriers(fmcsa, { name });
      const scan = await scanOf({ name });
      expect(got.total).toBe(scan.total);
      expect(got.total).toBeGreaterThan(0);
    });

    it('reads the index, not carriers: the dictionary filtered by the name, the postings of its terms alone', async () => {
      // A term no other term contains: the dictionary gives exactly it.
      const [{ term }] = await fmcsa.query(
        `SELECT d.term FROM carrier_name_dict d WHERE (SELECT count(*) FROM carrier_name_dict e WHERE contains(e.term, d.term)) = 1 ORDER BY hash(d.term) LIMIT 1`,
      );
      const word = String(term);
      const params = { name: word, state: null, limit: 20, offset: 0 };
      const plan = await planOf(fmcsa, sql('search-carriers-by-term.sql'), params);
      // Two parquet scans: the dictionary with the name's contains() pushed into it, and the postings (the only
      // table with `flag`); carriers (legal_name) and carrier_risk are not read, and nothing is joined but the semi
      // join of the postings to their terms.
      expect(plan).toMatch(/READ_PARQUET[\s\S]*Filters:[\s\S]*contains\(term, '/);
      expect(plan).toMatch(/Projections:[\s\S]*flag/);
      expect(plan).not.toMatch(/legal_name|risk_score/);
      expect(plan.match(/Join Type: (\w+)/g)).toEqual(['Join Type: SEMI']);
      // Run: the postings scan gets the matched terms as a filter (row groups of other terms are skipped by their
      // min/max) and returns the rows of those terms alone, not the whole table.
      const analyzed = (await fmcsa.query(`EXPLAIN ANALYZE ${sql('search-carriers-by-term.sql')}`, params))
        .map((x) => String(x.explain_value))
        .join('\n');
      expect(analyzed).toMatch(new RegExp(`flag[\\s\\S]*Dynamic Filters:[\\s\\S]*term='${word}'`));
      const [{ postings, all }] = await fmcsa.query(
        `SELECT count(*) FILTER (WHERE term = $name)::INTEGER AS postings, count(*)::INTEGER AS all FROM carrier_name_terms`,
        { name: word },
      );
      expect(Number(postings)).toBeLessThan(Number(all));
      // The postings scan's box: from its `flag` projection down to its first row count (the left one of its line).
      const lines = analyzed.split('\n');
      const from = lines.findIndex((l) => /│\s*flag\s*│/.test(l));
      const counted = lines.slice(from).find((l) => /[\d,]+ rows?/.test(l));
      expect(Number(/([\d,]+) rows?/.exec(counted ?? '')?.[1]?.replace(/,/g, ''))).toBe(Number(postings));
    });
  });
});
