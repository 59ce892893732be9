/**
 * Every list route pages with one scheme (service/platform/pagination.ts, docs/architecture.md#pagination): `limit`
 * plus an opaque `cursor`, `next` in the body and `Link: rel="next"`. Over the small registry, quotes and
 * transcripts sample, walking `next` in small pages over each registry-side list that used to answer in one piece
 * (quote history both ways, a company's people, earnings dates, transcripts and facts, search per category,
 * transcript search) gets every row exactly once, in the one-page order; a tampered cursor is a 400 naming `cursor`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { buildRegistryWorld } from '../helpers/registry-world.ts';

let root: string;
let svc: TestService;
beforeAll(async () => {
  ({ root, svc } = await buildRegistryWorld('proofline-list-paging-'));
}, 300_000);
afterAll(async () => {
  await svc?.close();
  if (root) await removeDir(root);
});

type Body = Record<string, any>;

/**
 * Follows `next` from `first` to the last page; on every page the body's `next` is the Link header's target (no
 * Link header on the last page) and `next_cursor` its `cursor`. Returns the pages' bodies.
 */
async function walk(first: string): Promise<Body[]> {
  const pages: Body[] = [];
  let url: string | null = first;
  while (url) {
    const r = await getJson(svc.app, url);
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
});
