import { afterAll, beforeAll, it as base, describe, expect } from 'vitest';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { getJson } from '../helpers/app.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';

const json = (method: string, body: unknown) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(STATE_BACKENDS)('watchlists ($name state store)', (backend) => {
  let w: World;
  let dots: number[];
  beforeAll(async () => {
    if (backend.skip) return;
    w = await buildWorld({}, {}, backend);
    const rows = await w.svc.deps.readers.fmcsa!.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 40');
    dots = rows.map((r) => Number(r.dot_number));
  }, 120_000);
  afterAll(async () => w?.close());
  const it = base.skipIf(backend.skip);

  it('adds carriers, lists them by DOT in cursor pages with their snapshot state, and removes one', async () => {
    const add = await getJson(
      w.svc.app,
      '/api/watchlist',
      json('POST', { broker_id: 'wl', dot_numbers: [dots[2], String(dots[0]), dots[1]] }),
    );
    expect(add.status).toBe(200);
    expect(add.body).toMatchObject({ account_id: 'broker:wl', added: [dots[2], dots[0], dots[1]], watched: 3, limit: 25 });
    const again = await getJson(w.svc.app, '/api/watchlist', json('POST', { broker_id: 'wl', dot_numbers: [dots[0]] }));
    expect(again.body).toMatchObject({ added: [], already_watched: [dots[0]], watched: 3 });

    const p1 = await getJson(w.svc.app, '/api/watchlist?broker_id=wl&limit=2');
    expect(p1.status).toBe(200);
    expect(p1.body.carriers.map((c: any) => c.dot_number)).toEqual([dots[0], dots[1]]);
    expect(p1.body.carriers[0].state).toMatchObject({ snapshot_id: expect.any(String), risk_level: expect.any(String) });
    expect(p1.body.carriers[0].state.origin.leaf_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(p1.body.carriers[0].last_change).toBeNull();
    // The cursor is opaque (pagination.ts's codec, not the bare DOT) and `next` / the Link header lead to page 2.
    expect(p1.body.next_cursor).not.toBe(String(dots[1]));
    expect(p1.headers.get('link')).toBe(`<${p1.body.next}>; rel="next"`);
    const p2 = await getJson(w.svc.app, `/api/watchlist?broker_id=wl&limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.carriers.map((c: any) => c.dot_number)).toEqual([dots[2]]);
    expect(p2.body.next_cursor).toBeNull();
    expect(p2.headers.get('link')).toBeNull();
    // A plain key or a tampered cursor is a 400 naming `cursor`.
    for (const bad of [String(dots[1]), `${p1.body.next_cursor}x`, 'eyJrIjpbIi0xIl19'])
      expect(await getJson(w.svc.app, `/api/watchlist?broker_id=wl&cursor=${bad}`)).toMatchObject({
        status: 400,
        body: { parameter: 'cursor' },
      });

    const del = await getJson(w.svc.app, `/api/watchlist/${dots[1]}?broker_id=wl`, { method: 'DELETE' });
    expect(del.body).toMatchObject({ removed: [dots[1]], not_watched: [] });
    const after = await getJson(w.svc.app, '/api/watchlist?broker_id=wl');
    expect(after.body.carriers.map((c: any) => c.dot_number)).toEqual([dots[0], dots[2]]);
  });

  it('refuses a watchlist beyond the plan limit with 402 naming the limit, adding nothing', async () => {
    const r = await getJson(w.svc.app, '/api/watchlist', json('POST', { broker_id: 'full', dot_numbers: dots.slice(0, 26) }));
    expect(r.status).toBe(402);
    expect(JSON.stringify(r.body)).toMatch(/25/);
    const list = await getJson(w.svc.app, '/api/watchlist?broker_id=full');
    expect(list.body.carriers).toEqual([]);
  });

  it('answers bad input with a 400 naming the field', async () => {
    const bad = await getJson(w.svc.app, '/api/watchlist', json('POST', { broker_id: 'wl', dot_numbers: ['x1'] }));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/dot_numbers/);
    const noAccount = await getJson(w.svc.app, '/api/watchlist');
    expect(noAccount.status).toBe(400);
    expect(JSON.stringify(noAccount.body)).toMatch(/broker_id/);
    const badDot = await getJson(w.svc.app, '/api/watchlist/abc?broker_id=wl', { method: 'DELETE' });
    expect(badDot.status).toBe(400);
  });

  it('adds each vetted carrier automatically once the account opts in to auto_watch', async () => {
    const before = await getJson(w.svc.app, '/api/vet', json('POST', { broker_id: 'auto', dot_number: dots[5] }));
    expect(before.status).toBe(200);
    expect(before.body.watchlist).toBeUndefined();
    const s = await getJson(w.svc.app, '/api/monitoring/settings', json('POST', { broker_id: 'auto', auto_watch: true }));
    expect(s.body).toMatchObject({ account_id: 'broker:auto', auto_watch: true, plan: 'free', watchlist_limit: 25 });
    const vet = await getJson(w.svc.app, '/api/vet', json('POST', { broker_id: 'auto', dot_number: dots[6] }));
    expect(vet.body.watchlist).toEqual({ added: true });
    const list = await getJson(w.svc.app, '/api/watchlist?broker_id=auto');
    expect(list.body.carriers.map((c: any) => [c.dot_number, c.added_by])).toEqual([[dots[6], 'auto_vet']]);
  });
});
