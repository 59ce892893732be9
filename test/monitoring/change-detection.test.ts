import { afterAll, beforeAll, it as base, describe, expect } from 'vitest';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { detectChanges } from '../../service/monitoring/changes.queries.ts';
import { addToWatchlist } from '../../service/monitoring/watchlist.queries.ts';
import { getJson } from '../helpers/app.ts';
import { buildChangeWorld, type ChangeWorld } from './change-world.ts';

describe.each(STATE_BACKENDS)('change detection ($name state store)', (backend) => {
  const it = base.skipIf(backend.skip);
  let w: ChangeWorld;
  beforeAll(async () => {
    if (backend.skip) return;
    w = await buildChangeWorld(backend);
    const { revoked, oos, risk } = w.changed;
    await addToWatchlist(w.state, 'broker:watcher', [revoked, oos, risk, ...w.unchanged], 'api', new Date());
    await addToWatchlist(w.state, 'broker:other', [w.unchanged[0]!], 'api', new Date());
  }, 240_000);
  afterAll(async () => w?.close());

  describe('change detection between two published snapshots', () => {
    it('gives exactly one event per changed watched carrier, with the expected kinds and before/after values', async () => {
      const { revoked, oos, risk } = w.changed;
      const r = await detectChanges(w.state, w.config.dataDir, w.prevId, w.nextId, new Date());
      expect(r.watched).toBe(13);
      expect(r.events.map((e) => e.dot_number)).toEqual([revoked, oos, risk].sort((a, b) => a - b));
      const by = new Map(r.events.map((e) => [e.dot_number, e]));
      expect(by.get(revoked)!.kinds).toContain('authority_revoked');
      expect(by.get(revoked)!.changes).toContainEqual({ field: 'authority_status', before: 'ACTIVE', after: 'INACTIVE' });
      expect(by.get(oos)!.kinds).toContain('oos_added');
      expect(by.get(oos)!.changes).toContainEqual({ field: 'oos_orders_active', before: 0, after: 1 });
      expect(by.get(risk)!.kinds).toEqual(expect.arrayContaining(['risk_changed', 'red_flag_added']));
      expect(by.get(risk)!.kinds).not.toContain('insurance_cancelled');
      expect(by.get(risk)!.changes).toContainEqual({ field: 'risk_level', before: 'LOW', after: expect.not.stringMatching(/^LOW$/) });
      for (const e of r.events) {
        expect(e).toMatchObject({ prev_snapshot_id: w.prevId, next_snapshot_id: w.nextId });
        expect(e.origin.prev.leaf_hash).toMatch(/^[0-9a-f]{64}$/);
        expect(e.origin.prev.leaf_hash).not.toBe(e.origin.next.leaf_hash);
      }
    });

    it('names as next origin the same leaf GET /api/carrier/{dot}/snapshot serves for the new snapshot', async () => {
      const r = await detectChanges(w.state, w.config.dataDir, w.prevId, w.nextId, new Date());
      const snap = await getJson(w.svc.app, `/api/carrier/${w.changed.risk}/snapshot`);
      expect(snap.body.snapshot_id).toBe(w.nextId);
      expect(r.events.find((e) => e.dot_number === w.changed.risk)!.origin.next).toEqual(snap.body.origin);
    });

    it('stores events once (a replayed detection adds nothing) and lists them per account with cursor pages', async () => {
      await detectChanges(w.state, w.config.dataDir, w.prevId, w.nextId, new Date());
      const p1 = await getJson(w.svc.app, '/api/monitoring/events?broker_id=watcher&limit=2');
      expect(p1.status).toBe(200);
      expect(p1.body.events).toHaveLength(2);
      const p2 = await getJson(w.svc.app, `/api/monitoring/events?broker_id=watcher&limit=2&cursor=${p1.body.next_cursor}`);
      expect(p2.body.events).toHaveLength(1);
      expect(p2.body.next_cursor).toBeNull();
      expect(p1.headers.get('link')).toBe(`<${p1.body.next}>; rel="next"`);
      // The cursor is opaque: the sequence number it holds, given bare, is a 400 naming `cursor`.
      const seq = JSON.parse(Buffer.from(p1.body.next_cursor, 'base64url').toString('utf8')).k[0];
      expect(await getJson(w.svc.app, `/api/monitoring/events?broker_id=watcher&cursor=${seq}`)).toMatchObject({
        status: 400,
        body: { parameter: 'cursor' },
      });
      const all = [...p1.body.events, ...p2.body.events].map((e: any) => e.dot_number).sort();
      expect(all).toEqual(Object.values(w.changed).sort());
      const other = await getJson(w.svc.app, '/api/monitoring/events?broker_id=other');
      expect(other.body.events).toEqual([]);
      const one = await getJson(w.svc.app, `/api/monitoring/events?broker_id=watcher&dot=${w.changed.oos}`);
      expect(one.body.events.map((e: any) => e.dot_number)).toEqual([w.changed.oos]);
      const list = await getJson(w.svc.app, '/api/watchlist?broker_id=watcher');
      const oosRow = list.body.carriers.find((c: any) => c.dot_number === w.changed.oos);
      expect(oosRow.last_change).toMatchObject({ kinds: expect.arrayContaining(['oos_added']), snapshot_id: w.nextId });
      expect(oosRow.state.oos_orders_active).toBe(1);
    });
  });
});
