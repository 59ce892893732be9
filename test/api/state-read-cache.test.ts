/**
 * The embedded state store's read cache (service/platform/state.read-cache.ts, issue 22): the account-state routes
 * answer a repeated read without a state query, and every acknowledged write is visible to the next read. On
 * PostgreSQL the same routes read the database each time (other nodes write it): the visibility half runs there too.
 */
import { afterAll, beforeAll, it as base, describe, expect, it as plain } from 'vitest';
import { readTables, StateReadCache, writtenTables } from '../../service/platform/state.read-cache.ts';
import type { DuckDbStateStore } from '../../service/platform/state.duckdb.ts';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { getJson } from '../helpers/app.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';

const json = (method: string, body: unknown) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('what a statement reads and writes', () => {
  plain('names every table a read could read, whatever the syntax', () => {
    const t = readTables(`-- header naming nothing
      SELECT * FROM main.watchlist w, "Accounts" a JOIN change_events e ON e.dot = w.dot
      WHERE w.id IN (SELECT x FROM unnest(from_json($1, '["VARCHAR"]')))`);
    for (const table of ['watchlist', 'accounts', 'change_events']) expect(t).toContain(table);
    expect(t).not.toContain('header');
  });
  plain('names the target of each write, and "unknown" (everything) for what it cannot tell', () => {
    expect(writtenTables('INSERT INTO "watchlist" (a) VALUES ($1)')).toEqual(['watchlist']);
    expect(writtenTables('UPDATE main.accounts SET plan = $1 WHERE account_id = $2 RETURNING account_id')).toEqual(['accounts']);
    expect(writtenTables('DELETE FROM webhook_endpoints WHERE endpoint_id = $1')).toEqual(['webhook_endpoints']);
    expect(writtenTables('-- a comment saying create\nSELECT count(*) FROM care_events')).toEqual([]);
    expect(writtenTables('CREATE TABLE IF NOT EXISTS x (a INTEGER)')).toBeNull();
    expect(writtenTables('MERGE INTO accounts USING t ON true WHEN MATCHED THEN DELETE')).toBeNull();
    expect(writtenTables('CHECKPOINT')).toBeNull();
  });
  plain('keeps an answer while its tables are unchanged and drops it when one is written or nothing is known', async () => {
    const c = new StateReadCache();
    let loads = 0;
    const load = async () => [{ n: ++loads }];
    const read = () => c.read('SELECT count(*) AS n FROM watchlist WHERE account_id = $1', ['a'], load);
    expect(await read()).toEqual([{ n: 1 }]);
    expect(await read()).toEqual([{ n: 1 }]);
    c.bump(['accounts']);
    expect(await read()).toEqual([{ n: 1 }]);
    c.bump(['watchlist']);
    expect(await read()).toEqual([{ n: 2 }]);
    c.bump(null);
    expect(await read()).toEqual([{ n: 3 }]);
    expect(c.stats).toEqual({ hits: 2, misses: 3 });
  });
  plain('holds a bounded amount: everything is dropped past its entry or byte bound', async () => {
    const c = new StateReadCache(1000, 100);
    let loads = 0;
    const big = async () => {
      loads++;
      return [{ json: 'x'.repeat(150) }];
    };
    await c.read('SELECT json FROM vetting_records WHERE dot = $1', [1], big);
    await c.read('SELECT json FROM vetting_records WHERE dot = $1', [2], big); // past 100 bytes: the first is dropped
    await c.read('SELECT json FROM vetting_records WHERE dot = $1', [1], big);
    expect(loads).toBe(3);
  });
  plain('never keeps an answer read while a write to its table committed', async () => {
    const c = new StateReadCache();
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const first = c.read('SELECT * FROM watchlist', [], async () => {
      await slow;
      return [{ v: 'old' }];
    });
    c.bump(['watchlist']); // committed while the first read was in flight
    release();
    expect(await first).toEqual([{ v: 'old' }]);
    expect(await c.read('SELECT * FROM watchlist', [], async () => [{ v: 'new' }])).toEqual([{ v: 'new' }]);
  });
});

describe.each(STATE_BACKENDS)('account-state reads after writes ($name state store)', (backend) => {
  let w: World;
  let dots: number[];
  beforeAll(async () => {
    if (backend.skip) return;
    w = await buildWorld({}, {}, backend);
    dots = (await w.svc.deps.readers.fmcsa!.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 5')).map((r) =>
      Number(r.dot_number),
    );
  }, 120_000);
  afterAll(async () => w?.close());
  const it = base.skipIf(backend.skip);
  const embedded = backend.name.startsWith('embedded');
  const cache = () => (w.state as DuckDbStateStore).readCache;
  const get = async (path: string) => {
    const r = await getJson(w.svc.app, path);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };

  it('answers a repeated read without a state query, and shows each acknowledged write on the next read', async () => {
    expect((await get('/api/monitoring/settings?broker_id=rc')).auto_watch).toBe(false);
    expect((await get('/api/watchlist?broker_id=rc')).carriers).toEqual([]);
    if (embedded) {
      // Warm: the same reads again are answered from the cache (zero state queries per answer).
      const before = { ...cache().stats };
      await get('/api/monitoring/settings?broker_id=rc');
      await get('/api/watchlist?broker_id=rc');
      await get('/api/monitoring/events?broker_id=rc');
      await get('/api/monitoring/events?broker_id=rc');
      expect(cache().stats.misses - before.misses).toBe(1); // the events page, read once
      expect(cache().stats.hits - before.hits).toBeGreaterThanOrEqual(4);
    }
    // Each write, once acknowledged, is in the next read.
    expect((await getJson(w.svc.app, '/api/monitoring/settings', json('POST', { broker_id: 'rc', auto_watch: true }))).status).toBe(200);
    expect((await get('/api/monitoring/settings?broker_id=rc')).auto_watch).toBe(true);
    const add = await getJson(w.svc.app, '/api/watchlist', json('POST', { broker_id: 'rc', dot_numbers: [dots[0], dots[1]] }));
    expect(add.status).toBe(200);
    expect((await get('/api/watchlist?broker_id=rc')).carriers.map((c: { dot_number: number }) => c.dot_number)).toEqual([
      dots[0],
      dots[1],
    ]);
    expect((await get('/api/monitoring/settings?broker_id=rc')).watched).toBe(2);
    expect((await getJson(w.svc.app, `/api/watchlist/${dots[0]}?broker_id=rc`, { method: 'DELETE' })).status).toBe(200);
    expect((await get('/api/watchlist?broker_id=rc')).carriers.map((c: { dot_number: number }) => c.dot_number)).toEqual([dots[1]]);
    expect((await get('/api/monitoring/settings?broker_id=rc')).watched).toBe(1);
  });

  it('shows a new webhook endpoint, vetting record and care document on the next list, and counts them in /api/status', async () => {
    w.svc.deps.options.webhookPrivateOrigins = ['http://127.0.0.1:9'];
    expect((await get('/api/webhooks?broker_id=rc')).endpoints).toEqual([]);
    const ep = await getJson(
      w.svc.app,
      '/api/webhooks',
      json('POST', { broker_id: 'rc', url: 'http://127.0.0.1:9/hook', event_types: ['carrier.changed'] }),
    );
    expect(ep.status, JSON.stringify(ep.body)).toBe(200);
    expect((await get('/api/webhooks?broker_id=rc')).endpoints.map((e: { endpoint_id: string }) => e.endpoint_id)).toEqual([
      ep.body.endpoint_id,
    ]);

    const status0 = (await get('/api/status')).state;
    expect((await get(`/api/vetting?dot=${dots[2]}`)).count).toBe(0);
    const vet = await getJson(w.svc.app, '/api/vet', json('POST', { dot_number: dots[2], broker_id: 'rc' }));
    expect(vet.status, JSON.stringify(vet.body)).toBe(200);
    const history = await get(`/api/vetting?dot=${dots[2]}`);
    expect(history.records.map((r: { vetting_id: string }) => r.vetting_id)).toEqual([vet.body.vetting_id]);

    const docs0 = (await get('/api/care')).documents.length;
    const doc = await getJson(
      w.svc.app,
      '/api/care',
      json('POST', {
        shipment: { ref: 'BOL-1', commodity: 'steel', value_usd: 1000 },
        parties: { broker: { name: 'Acme' }, carrier: { name: 'X', dot_number: dots[2] } },
      }),
    );
    expect(doc.status, JSON.stringify(doc.body)).toBe(201);
    const docs = (await get('/api/care')).documents;
    expect(docs.length).toBe(docs0 + 1);
    expect(docs[0].document_id).toBe(doc.body.document_id);

    // The counts equal the tables' own count(*) after the writes.
    const status = (await get('/api/status')).state;
    expect(status.vetting_records).toBe(status0.vetting_records + 1);
    expect(status.care_documents).toBe(status0.care_documents + 1);
    const [c] = await w.state.query(
      'SELECT (SELECT count(*) FROM vetting_records)::INTEGER AS v, (SELECT count(*) FROM care_documents)::INTEGER AS d, (SELECT count(*) FROM care_events)::INTEGER AS e, (SELECT count(*) FROM accounts)::INTEGER AS a',
    );
    expect(status).toEqual({ vetting_records: c!.v, care_documents: c!.d, care_events: c!.e, accounts: c!.a });
  });
});
