/**
 * The company timeline pages like every list route (service/platform/pagination.ts): `limit` + opaque `cursor`,
 * `next` in the body and `Link: rel="next"`. Walking `next` over AAPL's timeline in small pages returns every event
 * of the company exactly once, newest first across page boundaries; the walked events are the one-page answer's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../service/platform/pagination.ts';
import { getJson, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { buildRegistryWorld } from '../helpers/registry-world.ts';

let root: string;
let svc: TestService;
beforeAll(async () => {
  ({ root, svc } = await buildRegistryWorld('proofline-timeline-paging-'));
}, 300_000);
afterAll(async () => {
  await svc?.close();
  if (root) await removeDir(root);
});

describe('timeline pagination', { timeout: 120_000 }, () => {
  it('walks /api/company/AAPL/timeline to the end: every event exactly once, newest first', async () => {
    const [{ n }] = await svc.deps.readers.registry!.query(
      'SELECT count(*)::INTEGER AS n FROM timeline WHERE cik = (SELECT cik FROM company_lookup WHERE ticker = $t LIMIT 1)',
      { t: 'AAPL' },
    );
    expect(n).toBeGreaterThan(10);
    const events: Array<Record<string, unknown>> = [];
    let url: string | null = '/api/company/AAPL/timeline?limit=7';
    let pages = 0;
    while (url) {
      const r = await getJson(svc.app, url);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      pages++;
      expect(r.body.total).toBe(n);
      events.push(...r.body.events);
      const next = r.body.next as string | null;
      if (next) {
        expect(r.headers.get('link')).toBe(`<${next}>; rel="next"`);
        expect(r.body.next_cursor).toBe(new URL(next).searchParams.get('cursor'));
        const u = new URL(next);
        expect(u.searchParams.get('limit')).toBe('7');
        url = `${u.pathname}${u.search}`;
      } else {
        expect(r.body.next_cursor).toBeNull();
        expect(r.headers.get('link')).toBeNull();
        url = null;
      }
    }
    expect(pages).toBe(Math.ceil(Number(n) / 7));
    expect(events.length).toBe(n);
    const keys = events.map((e) => `${e.accession}|${e.item}|${e.title}|${e.origin_leaf}`);
    expect(new Set(keys).size).toBe(n);
    for (let i = 1; i < events.length; i++) expect(String(events[i - 1]!.date) >= String(events[i]!.date)).toBe(true);
    // The same events, in the same order, as one page of them all.
    const all = (await getJson(svc.app, '/api/company/AAPL/timeline?limit=200')).body;
    expect(all.next).toBeNull();
    expect(all.events.map((e: Record<string, unknown>) => `${e.accession}|${e.item}|${e.title}|${e.origin_leaf}`)).toEqual(keys);
  });

  it('answers 400 naming cursor for a malformed one and 409 for a cursor of another snapshot', async () => {
    expect(await getJson(svc.app, '/api/company/AAPL/timeline?cursor=nope')).toMatchObject({ status: 400, body: { parameter: 'cursor' } });
    const stale = encodeCursor(7, 'an-older-snapshot');
    expect((await getJson(svc.app, `/api/company/AAPL/timeline?cursor=${stale}`)).status).toBe(409);
  });
});
