/**
 * The registry's identity stores (issue 22; jobs/registry/packed-identity.sql, packed-tickers.sql): the identity
 * card (both sizes), the latest quote and the quote history answer the same bytes from the packed records as from
 * the SQL path (a registry snapshot without the stores), for every ticker and CIK of the small sample, and the same
 * 404 for unknown tickers and CIKs; and with the stores (and the quotes' chain heads store) such an answer runs no
 * DuckDB query on either reader (the plan guard of issue 22, no timing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { silentLogger } from '../../lib/log.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import { findCompany, findCompanyIdentity, getIdentityCard, pickSharesAsOf } from '../../service/company/company.queries.ts';
import { getLatestQuote, getQuoteHistory } from '../../service/quotes/quotes.queries.ts';
import { answer, counting, sqlOnly } from '../helpers/reader-variants.ts';

const BASE = 'https://proofline.test';

describe('registry identity stores', () => {
  let dir: string;
  let registry: SnapshotReader;
  let quotes: SnapshotReader;
  let tickers: string[];
  let ciks: number[];
  let quoteTickers: string[];

  beforeAll(async () => {
    dir = await tempDir('proofline-identity-packed-');
    const input = `${dir}/input`;
    await ensureSample(input, { scale: 'small', seed: 42, generators: [edgarSampleGenerator, quotesSampleGenerator] });
    const config = testConfig(`${dir}/data`);
    for (const p of [registryPipeline, quotesPipeline])
      await runPipelineInProcess(p, { config, log: silentLogger, inputDir: input, force: true, backoffMs: 1, concurrency: 2 });
    registry = await SnapshotReader.open(`${dir}/data`, 'registry', { poolSize: 2 });
    quotes = await SnapshotReader.open(`${dir}/data`, 'quotes', { poolSize: 2 });
    tickers = (await registry.query(`SELECT ticker FROM company_lookup ORDER BY ticker`)).map((r) => String(r.ticker));
    ciks = (await registry.query(`SELECT DISTINCT cik FROM company_lookup ORDER BY cik`)).map((r) => Number(r.cik));
    quoteTickers = (await quotes.query(`SELECT DISTINCT ticker FROM quote_bars ORDER BY ticker`)).map((r) => String(r.ticker));
  }, 240_000);
  afterAll(async () => {
    await registry?.close();
    await quotes?.close();
    await removeDir(dir);
  });

  it('publishes one identity record per company and every ticker in the ticker store', async () => {
    expect(registry.packed('registry_identity')!.size).toBe(ciks.length);
    expect(registry.packed('registry_tickers')!.size).toBeGreaterThan(0);
    expect(tickers.length).toBeGreaterThan(ciks.length); // some companies have several tickers (classes, preferreds)
    expect(quoteTickers.filter((t) => tickers.includes(t)).length).toBeGreaterThan(100);
  });

  it('finds every company by ticker and CIK with the same row as find-company.sql, and misses with the same 404', async () => {
    const sql = sqlOnly(registry);
    const refs = [
      ...tickers,
      ...tickers.slice(0, 40).map((t) => t.toLowerCase().replace(/-/g, '.')),
      ...ciks.map(String),
      ...ciks.slice(0, 30).flatMap((c) => [String(c).padStart(10, '0'), `CIK${String(c).padStart(10, '0')}`]),
      // unknown: near misses (hints), far misses, unknown CIKs (one beyond INTEGER), bad input
      ...tickers.slice(0, 20).map((t) => `${t}X`),
      'ZZZZQ',
      'SPY',
      '1',
      '9999999999',
      'not a ticker!',
    ];
    for (const ref of refs) expect(await answer(() => findCompany(registry, ref)), ref).toBe(await answer(() => findCompany(sql, ref)));
  }, 120_000);

  it('answers the identity card (both sizes), the latest quote and the quote history with the same bytes as the SQL path', async () => {
    const sql = sqlOnly(registry);
    const refs = [
      ...new Set([...quoteTickers, ...tickers.filter((_, i) => i % 3 === 0), ...ciks.filter((_, i) => i % 5 === 0).map(String)]),
    ];
    refs.push('SPY', 'ZZZZQ', '9999999');
    let compared = 0;
    let withMarketCap = 0;
    for (const t of refs) {
      const calls: Array<(r: SnapshotReader) => Promise<unknown>> = [
        (r) => getIdentityCard(r, quotes, t, BASE),
        (r) => getIdentityCard(r, quotes, t, BASE, 'full'),
        (r) => getIdentityCard(r, undefined, t, BASE, 'full'),
        (r) => getLatestQuote({ quotes, registry: r }, t),
        (r) => getLatestQuote({ quotes, registry: r }, t, { adjustment: 'split_dividend' }),
        (r) => getQuoteHistory({ quotes, registry: r }, t),
        (r) => getQuoteHistory({ quotes, registry: r }, t, { limit: 5, adjustment: 'raw' }),
      ];
      for (const call of calls) {
        const got = await answer(() => call(registry));
        expect(got, t).toBe(await answer(() => call(sql)));
        if (/"market_cap(_usd)?":\d/.test(got)) withMarketCap++;
        compared++;
      }
    }
    expect(compared).toBe(refs.length * 7);
    // The market caps (share count as of the quote date) are among what is compared, not only nulls.
    expect(withMarketCap).toBeGreaterThan(300);
  }, 300_000);

  it('picks the share count as of any date as market-shares-asof.sql does (before the first, on and between period ends, after the last)', async () => {
    const asOfSql = loadSql('../../service/quotes/market-shares-asof.sql', import.meta.url);
    let compared = 0;
    for (const cik of ciks.filter((_, i) => i % 10 === 0)) {
      const { shares } = await findCompanyIdentity(registry, String(cik));
      const ends = (shares ?? []).map((r) => String(r.period_end));
      if (ends.length === 0) continue;
      const shift = (d: string, n: number) => new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
      for (const d of [
        shift(ends[0]!, -400),
        ...ends,
        ...ends.map((e) => shift(e, 1)),
        ...ends.map((e) => shift(e, -1)),
        shift(ends.at(-1)!, 900),
      ]) {
        const [row] = await registry.query(asOfSql, { cik, quote_date: d });
        const picked = pickSharesAsOf(shares!, d);
        expect([picked?.period_end, picked?.value, picked?.accession, picked?.concept], `${cik} ${d}`).toEqual([
          row?.period_end,
          row?.value,
          row?.accession,
          row?.concept,
        ]);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('pages through a quote history as the SQL path does (backward and from a date)', async () => {
    const sql = sqlOnly(registry);
    for (const t of quoteTickers.filter((_, i) => i % 40 === 0)) {
      for (const from of [undefined, '2020-01-01']) {
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = (r: SnapshotReader) => getQuoteHistory({ quotes, registry: r }, t, { limit: 50, from, cursor });
          const [a, b] = [await page(registry), await page(sql)];
          expect(JSON.stringify(a), `${t} page ${pages}`).toBe(JSON.stringify(b));
          cursor = a.next_cursor ?? undefined;
          pages++;
        } while (cursor && pages < 6);
      }
    }
  }, 120_000);

  it('reads each company identity record once per snapshot for the quote history, with the same answers after', async () => {
    // The history answers only the company's ticker and name (findCompanyName): its ~13 KB identity record (share
    // counts and their origins) is parsed on the first page of the snapshot, not on every page (issue 22).
    const reads = new Map<string, number>();
    const wrapped = new Map<object, object>();
    const r = Object.create(registry) as SnapshotReader;
    Object.defineProperty(r, 'packed', {
      value: (name: string) => {
        const store = registry.packed(name);
        if (!store) return store;
        // One counting store per served store (the memo is kept per store object, as a snapshot's stores are).
        if (!wrapped.has(store)) {
          const s = Object.create(store) as typeof store;
          Object.defineProperty(s, 'get', {
            value: (key: number) => {
              reads.set(name, (reads.get(name) ?? 0) + 1);
              return store.get(key);
            },
          });
          wrapped.set(store, s);
        }
        return wrapped.get(store);
      },
    });
    const some = quoteTickers.filter((t) => tickers.includes(t)).slice(0, 20);
    const cik = String((await registry.query(`SELECT cik FROM company_lookup WHERE ticker = $t`, { t: some[0]! }))[0]!.cik);
    const sql = sqlOnly(registry);
    for (const round of [1, 2, 3])
      for (const t of [...some, cik, 'ZZZZQ']) {
        const page = (x: SnapshotReader) => getQuoteHistory({ quotes, registry: x }, t, { limit: 3 });
        expect(await answer(() => page(r)), `${t} round ${round}`).toBe(await answer(() => page(sql)));
      }
    // Each known ticker and the CIK once (the CIK's primary ticker is read under its own key), over three rounds.
    expect(reads.get('registry_identity')).toBe(some.length + 1);
    expect(reads.get('registry_tickers')).toBeGreaterThanOrEqual(some.length + 3); // the unknown ticker each round
  });

  it('runs no DuckDB query for a card, a latest quote or a default quote history page', async () => {
    const reg = counting(registry);
    const quo = counting(quotes);
    const some = quoteTickers.filter((t) => tickers.includes(t)).slice(0, 60);
    const cik = String((await registry.query(`SELECT cik FROM company_lookup WHERE ticker = $t`, { t: some[0]! }))[0]!.cik);
    for (const t of [...some, cik]) {
      await getIdentityCard(reg.reader, quo.reader, t, BASE);
      await getIdentityCard(reg.reader, quo.reader, t, BASE, 'full');
      await getLatestQuote({ quotes: quo.reader, registry: reg.reader }, t);
      await getQuoteHistory({ quotes: quo.reader, registry: reg.reader }, t);
    }
    // A ticker the registry does not know (quotes of an ETF): no hint query either.
    await getLatestQuote({ quotes: quo.reader, registry: reg.reader }, 'ZZZZQ').catch(() => null);
    expect(reg.count()).toBe(0);
    expect(quo.count()).toBe(0);
  });
});
