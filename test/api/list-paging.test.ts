/**
 * Every list route pages with one scheme (service/platform/pagination.ts, docs/architecture.md#pagination): `limit`
 * plus an opaque `cursor`, `next` in the body and `Link: rel="next"`. Over the small registry, quotes and
 * transcripts sample, walking `next` in small pages over each registry-side list that used to answer in one piece
 * (quote history both ways, a company's people, earnings dates, transcripts and facts, search per category,
 * transcript search) gets every row exactly once, in the one-page order; a tampered cursor is a 400 naming `cursor`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/api-keys.ts';
import { createApp } from '../../service/app.ts';
import { searchRegistry } from '../../service/search/search.queries.ts';
import { clockPast, getJson as getJsonAs, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { buildRegistryWorld } from '../helpers/registry-world.ts';

let root: string;
let svc: TestService;
/** A Pro key: the walks make more requests than the free tier's hourly limit. */
let auth: Record<string, string>;
beforeAll(async () => {
  ({ root, svc } = await buildRegistryWorld('proofline-list-paging-'));
  const key = await createApiKey(svc.config.dataDir, { label: 'list-paging', hourlyLimit: 100_000 });
  auth = { authorization: `Bearer ${key.secret}` };
}, 300_000);
const getJson = (app: TestService['app'], path: string) => getJsonAs(app, path, { headers: auth });
afterAll(async () => {
  await svc?.close();
  if (root) await removeDir(root);
});

type Body = Record<string, any>;

/**
 * Follows `next` from `first` to the last page; on every page the body's `next` is the Link header's target (no
 * Link header on the last page) and `next_cursor` its `cursor`. Returns the pages' bodies.
 */
async function walk(first: string, app: TestService['app'] = svc.app): Promise<Body[]> {
  const pages: Body[] = [];
  let url: string | null = first;
  while (url) {
    const r = await getJson(app, url);
    expect(r.status, `${url}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(200);
    pages.push(r.body);
    const next = r.body.next as string | null;
    expect(next === null || typeof next === 'string').toBe(true);
    if (next) {
      expect(next.startsWith('http://proofline.test/')).toBe(true);
      expect(r.headers.get('link')).toBe(`<${next}>; rel="next"`);
      expect(r.body.next_cursor).toBe(new URL(next).searchParams.get('cursor'));
      const u = new URL(next);
      url = `${u.pathname}${u.search}`;
    } else {
      expect(r.body.next_cursor).toBeNull();
      expect(r.headers.get('link')).toBeNull();
      url = null;
    }
    expect(pages.length).toBeLessThan(500);
  }
  return pages;
}

/** A cursor with its payload changed: still base64url, no longer one this API issued for the list. */
function tampered(cursor: string): string {
  const body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  if ('k' in body) body.k = ['x', ...body.k];
  else if ('m' in body) for (const l of Object.keys(body.m)) body.m[l] = -1;
  else body.o = -1;
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

async function expectBadCursor(path: string, cursor: string): Promise<void> {
  for (const bad of [tampered(cursor), 'nope', `${cursor}x`]) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await getJson(svc.app, `${path}${sep}cursor=${encodeURIComponent(bad)}`);
    expect(r.status, `${path} cursor=${bad}: ${JSON.stringify(r.body).slice(0, 200)}`).toBe(400);
    expect(r.body.parameter).toBe('cursor');
  }
}

describe('list paging (registry, quotes, transcripts)', { timeout: 120_000 }, () => {
  it('walks AAPL quote history back from the latest day: every day of the chain once, newest first', async () => {
    const one = (await getJson(svc.app, '/api/company/AAPL/quote/history?limit=365')).body;
    const days = Number(one.chain.days);
    expect(days).toBeGreaterThan(20);
    const pages = await walk('/api/company/AAPL/quote/history?limit=7');
    expect(pages.length).toBe(Math.ceil(days / 7));
    const dates = pages.flatMap((p) => p.quotes.map((q: Body) => q.quote_date as string));
    expect(dates.length).toBe(days);
    expect(new Set(dates).size).toBe(days);
    for (let i = 1; i < dates.length; i++) expect(dates[i - 1]! > dates[i]!).toBe(true);
    expect(dates[0]).toBe(one.chain.last_date);
    expect(dates.at(-1)).toBe(one.chain.first_date);
    // Each day's parent is the next (older) day's leaf, across page boundaries too.
    const quotes = pages.flatMap((p) => p.quotes as Body[]);
    for (let i = 0; i + 1 < quotes.length; i++) expect(quotes[i]!.origin.parent).toBe(quotes[i + 1]!.origin.leaf_hash);
    // The first page is today's answer: the latest 7 days.
    expect(pages[0]!.quotes.map((q: Body) => q.quote_date)).toEqual(one.quotes.slice(0, 7).map((q: Body) => q.quote_date));
    await expectBadCursor('/api/company/AAPL/quote/history?limit=7', pages[0]!.next_cursor);
  });

  it('walks AAPL quote history forward from `from`: the start date window first, then the later days', async () => {
    const one = (await getJson(svc.app, '/api/company/AAPL/quote/history?limit=365')).body;
    const all = (one.quotes as Body[]).map((q) => q.quote_date as string).reverse(); // oldest first
    const from = all[3]!;
    const pages = await walk(`/api/company/AAPL/quote/history?limit=5&from=${from}`);
    expect(pages[0]!.quotes.map((q: Body) => q.quote_date)).toEqual(all.slice(3, 8).reverse());
    expect(pages.every((p) => p.from === from)).toBe(true);
    // Pages go forward in time, each newest first: every day from `from` on, once.
    const dates = pages.flatMap((p) => [...p.quotes.map((q: Body) => q.quote_date as string)].reverse());
    expect(dates).toEqual(all.slice(3));
  });

  it("walks a company's people in pages of 3: every role once, executives then board then owners, as the one-page answer", async () => {
    const one = (await getJson(svc.app, '/api/company/AAPL/people')).body;
    const key = (p: Body) => `${p.name}|${p.role}|${p.role_type}|${p.accession}`;
    const all = [...one.executives, ...one.board, ...one.owners].map(key);
    expect(one.total).toBe(all.length);
    expect(all.length).toBeGreaterThan(3);
    expect(one.next).toBeNull();
    const pages = await walk('/api/company/AAPL/people?limit=3');
    expect(pages.length).toBe(Math.ceil(all.length / 3));
    expect(pages.flatMap((p) => [...p.executives, ...p.board, ...p.owners].map(key))).toEqual(all);
    expect(pages.every((p) => p.total === all.length)).toBe(true);
    await expectBadCursor('/api/company/AAPL/people?limit=3', pages[0]!.next_cursor);
  });

  it("walks a company's confirmed earnings dates in pages of 2: every date once, newest first; the first page of 12 is today's answer", async () => {
    const first = (await getJson(svc.app, '/api/company/AAPL/earnings')).body;
    const all = (await getJson(svc.app, '/api/company/AAPL/earnings?limit=200')).body;
    const total = Number(all.confirmed_total);
    expect(all.confirmed.length).toBe(total);
    expect(first.confirmed).toEqual(all.confirmed.slice(0, 12));
    expect(total).toBeGreaterThan(2);
    const pages = await walk('/api/company/AAPL/earnings?limit=2');
    expect(pages.length).toBe(Math.ceil(total / 2));
    expect(pages.flatMap((p) => p.confirmed.map((e: Body) => e.accession))).toEqual(all.confirmed.map((e: Body) => e.accession));
    // The next dates and the latest 8-Ks are the same on every page.
    expect(pages.every((p) => JSON.stringify(p.predicted) === JSON.stringify(all.predicted))).toBe(true);
    await expectBadCursor('/api/company/AAPL/earnings?limit=2', pages[0]!.next_cursor);
  });

  it("walks a company's transcripts and its facts one by one: every row once, in the one-page order", async () => {
    const one = (await getJson(svc.app, '/api/company/AAPL/transcripts')).body;
    expect(one.transcripts.length).toBe(one.transcript_count);
    expect(one.transcript_count).toBeGreaterThan(1);
    const pages = await walk('/api/company/AAPL/transcripts?limit=1');
    expect(pages.length).toBe(one.transcript_count);
    expect(pages.flatMap((p) => p.transcripts.map((t: Body) => t.transcript_key))).toEqual(
      one.transcripts.map((t: Body) => t.transcript_key),
    );
    expect(pages.every((p) => p.transcript_count === one.transcript_count && p.origin.leaf_hash === one.origin.leaf_hash)).toBe(true);
    await expectBadCursor('/api/company/AAPL/transcripts?limit=1', pages[0]!.next_cursor);

    const facts = (await getJson(svc.app, '/api/company/AAPL/facts?limit=500')).body;
    expect(facts.fact_count).toBe(facts.total);
    expect(facts.total).toBeGreaterThan(1);
    const fpages = await walk('/api/company/AAPL/facts?limit=1');
    expect(fpages.length).toBe(facts.total);
    expect(fpages.flatMap((p) => p.facts.map((f: Body) => f.origin.leaf_hash))).toEqual(facts.facts.map((f: Body) => f.origin.leaf_hash));
    await expectBadCursor('/api/company/AAPL/facts?limit=1', fpages[0]!.next_cursor);
  });

  it('walks /api/search per category and all three together: every match once, in rank order; the first page is the top `limit`', async () => {
    const q = 'inc';
    const top = (await getJson(svc.app, `/api/search?q=${q}&limit=50`)).body;
    const keys = {
      companies: (r: Body) => r.ticker as string,
      people: (r: Body) => `${r.name}|${r.person_cik}`,
      events: (r: Body) => `${r.accession}|${r.title}|${r.event_type}`,
    };
    let walkedSome = false;
    for (const c of ['companies', 'people', 'events'] as const) {
      const total = Number(top.totals[c]);
      if (total < 3) continue;
      walkedSome = true;
      const size = Math.min(50, Math.max(2, Math.ceil(total / 12)));
      const pages = await walk(`/api/search?q=${q}&category=${c}&limit=${size}`);
      expect(pages.length).toBe(Math.ceil(total / size));
      const rows = pages.flatMap((p) => p.results[c] as Body[]);
      expect(rows.length).toBe(total);
      // The walked rows are the whole ranked list, once each and in rank order (the query function, unpaged).
      const whole = await searchRegistry(svc.deps.readers.registry!, { q, limit: total, category: c }, 'http://proofline.test');
      expect(rows.map(keys[c])).toEqual((whole.results[c] as Body[]).map(keys[c]));
      // The other lists are empty on a category's pages; `total` still counts every match.
      for (const o of ['companies', 'people', 'events'] as const)
        if (o !== c) expect(pages.every((p) => p.results[o].length === 0)).toBe(true);
      expect(pages.every((p) => p.total === top.total)).toBe(true);
      for (let i = 1; i < rows.length; i++) expect(Number(rows[i - 1]!.score)).toBeGreaterThanOrEqual(Number(rows[i]!.score));
      expect(rows.slice(0, 50).map(keys[c])).toEqual(top.results[c].map(keys[c]));
      await expectBadCursor(`/api/search?q=${q}&category=${c}&limit=2`, pages[0]!.next_cursor);
      // A cursor of one list is no cursor of another, nor of the three together.
      expect((await getJson(svc.app, `/api/search?q=${q}&cursor=${pages[0]!.next_cursor}`)).body.parameter).toBe('cursor');
    }
    expect(walkedSome).toBe(true);
    // Without category, `next` walks the three lists at once: each list's rows once, the first page the top 2 of each.
    const size = Math.min(50, Math.max(2, Math.ceil(Math.max(...Object.values(top.totals as Record<string, number>)) / 12)));
    const pages = await walk(`/api/search?q=${q}&limit=${size}`);
    const first = (await getJson(svc.app, `/api/search?q=${q}&limit=${size}`)).body;
    expect(pages[0]!.results).toEqual(first.results);
    for (const c of ['companies', 'people', 'events'] as const) {
      const rows = pages.flatMap((p) => p.results[c] as Body[]).map(keys[c]);
      const whole = await searchRegistry(
        svc.deps.readers.registry!,
        { q, limit: Number(top.totals[c]) || 1, category: c },
        'http://proofline.test',
      );
      expect(rows).toEqual((whole.results[c] as Body[]).map(keys[c]));
    }
    expect(pages.length).toBe(Math.ceil(Math.max(...Object.values(top.totals as Record<string, number>)) / size));
  });

  it('walks /api/search/transcripts: facts and topic-company rows once each, together or one list alone', async () => {
    const all = (await getJson(svc.app, '/api/search/transcripts?limit=500')).body;
    expect(all.next).toBeNull();
    expect(all.facts.length).toBe(all.fact_total);
    const companyRows = (b: Body) => (b.topics as Body[]).flatMap((t) => t.companies.map((c: Body) => `${t.topic}|${c.ticker}`));
    expect(companyRows(all).length).toBe(all.company_total);
    expect(all.fact_total).toBeGreaterThan(5);
    const facts = await walk('/api/search/transcripts?category=facts&limit=5');
    expect(facts.flatMap((p) => p.facts.map((f: Body) => f.origin.leaf_hash))).toEqual(all.facts.map((f: Body) => f.origin.leaf_hash));
    expect(facts.every((p) => p.topics.length === 0)).toBe(true);
    const companies = await walk('/api/search/transcripts?category=companies&limit=3');
    expect(companies.flatMap(companyRows)).toEqual(companyRows(all));
    expect(companies.every((p) => p.facts === undefined)).toBe(true);
    // A topic's company_count counts its companies over every page.
    for (const p of companies)
      for (const t of p.topics) expect(t.company_count).toBe(all.topics.find((x: Body) => x.topic === t.topic).company_count);
    const both = await walk('/api/search/transcripts?limit=4');
    expect(both.flatMap((p) => p.facts.map((f: Body) => f.origin.leaf_hash))).toEqual(all.facts.map((f: Body) => f.origin.leaf_hash));
    expect(both.flatMap(companyRows)).toEqual(companyRows(all));
    // Without limit, every topic-company row on the first page, as before paging (spec 000: no limit for this route).
    const plain = (await getJson(svc.app, '/api/search/transcripts')).body;
    expect(companyRows(plain)).toEqual(companyRows(all));
    expect(plain.facts.length).toBe(Math.min(50, all.fact_total));
    const first = await walk('/api/search/transcripts?first=true&limit=3');
    expect(first.flatMap(companyRows)).toEqual(companyRows(all));
    await expectBadCursor('/api/search/transcripts?limit=4', both[0]!.next_cursor);
    expect((await getJson(svc.app, `/api/search/transcripts?category=facts&cursor=${both[0]!.next_cursor}`)).body.parameter).toBe('cursor');
  });

  it('walks /api/ir/rankings one company a page: every ranked company once, ranks 1..n, the window pinned by the cursor', async () => {
    const GPT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
    const tickers = ['AAPL', 'MSFT', 'NVDA'];
    for (const [i, t] of tickers.entries())
      for (let k = 0; k <= i; k++) await getJsonAs(svc.app, `/api/company/${t}`, { headers: { 'user-agent': GPT } });
    await clockPast();
    const one = (await getJson(svc.app, '/api/ir/rankings')).body;
    expect(one.rankings.length).toBeGreaterThanOrEqual(3);
    expect(one.next).toBeNull();
    const [first] = await walk('/api/ir/rankings?limit=1').then((p) => p.slice(0, 1));
    // The walk on a clock stopped 1 ms ahead: the requests made during it are logged in the very millisecond its
    // window ends on (the window is [end - days, end), and a row's time is when it was logged), as on a fast server.
    const at = new Date(Date.now() + 1);
    const stopped = createApp({ ...svc.deps, now: () => at });
    const p1 = (await getJson(stopped, '/api/ir/rankings?limit=1')).body;
    expect(p1.rankings).toEqual(first!.rankings);
    // Requests made during the walk fall after the window the cursor pinned: the rest of the walk ranks as page 1 did.
    for (let k = 0; k < 5; k++) await getJsonAs(stopped, `/api/company/${one.rankings.at(-1).ticker}`, { headers: { 'user-agent': GPT } });
    const next = new URL(p1.next);
    const pages = [p1, ...(await walk(`${next.pathname}${next.search}`, stopped))];
    const rows = pages.flatMap((p) => p.rankings as Body[]);
    expect(rows.map((r) => r.ticker)).toEqual(one.rankings.map((r: Body) => r.ticker));
    expect(rows.map((r) => r.rank)).toEqual(rows.map((_r, i) => i + 1));
    // The same requests are in a first page asked later: the last company now ranks first.
    await clockPast(at.getTime());
    expect((await getJson(svc.app, '/api/ir/rankings?limit=1')).body.rankings[0].ticker).toBe(one.rankings.at(-1).ticker);
    // A row's time is when it was logged, not when its request arrived: a request answered after a first page
    // (its window ended before that page's millisecond) is never counted by that walk, however early it arrived.
    const usage = svc.deps.usage!;
    const T = Date.now() + 60_000;
    let ticks = 0;
    let last = 0;
    const ticking = createApp({ ...svc.deps, responseCache: undefined, now: () => new Date((last = T + 1000 * ++ticks)) });
    const logged: Array<[number, number]> = [];
    const record = usage.record.bind(usage);
    usage.record = (e) => {
      logged.push([e.ts_ms, last]);
      record(e);
    };
    try {
      expect((await getJsonAs(ticking, '/api/company/MSFT/people?limit=1', { headers: { 'user-agent': GPT } })).status).toBe(200);
    } finally {
      usage.record = record;
    }
    expect(logged).toHaveLength(1);
    expect(logged[0]![0]).toBe(logged[0]![1]); // the clock's latest reading, at the time of logging
    expect(logged[0]![0]).toBeGreaterThan(T + 1000); // not the metering's reading, the request's first
    await expectBadCursor('/api/ir/rankings?limit=1', pages[0]!.next_cursor);
    // A cursor of one window is no cursor of another `days`.
    expect((await getJson(svc.app, `/api/ir/rankings?days=7&limit=1&cursor=${pages[0]!.next_cursor}`)).body.parameter).toBe('cursor');
  });
});
