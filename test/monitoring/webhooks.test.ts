import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, it as base, describe, expect } from 'vitest';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { startMonitoringRunner, type MonitoringRunner } from '../../jobs/monitoring/monitoring.jobs.ts';
import { silentLogger } from '../../lib/log.ts';
import { lastMonitoredSnapshot, markMonitoredSnapshot } from '../../service/monitoring/changes.queries.ts';
import { monitoringProcessors } from '../../service/monitoring/monitoring.queries.ts';
import { emitEvent } from '../../service/monitoring/webhooks.queries.ts';
import { addToWatchlist } from '../../service/monitoring/watchlist.queries.ts';
import { getJson } from '../helpers/app.ts';
import { buildChangeWorld, type ChangeWorld } from './change-world.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const json = (method: string, body: unknown) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each(STATE_BACKENDS)('webhooks ($name state store)', (backend) => {
  const it = base.skipIf(backend.skip);
  let w: ChangeWorld;
  let runner: MonitoringRunner;
  const receivers: Receiver[] = [];
  const receiver = async (answer?: Receiver['answer']) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    w.svc.deps.options.webhookPrivateOrigins = receivers.map((x) => x.origin); // the test-only allowlist
    return r;
  };
  const register = async (broker: string, url: string, types = ['carrier.changed']) => {
    const r = await getJson(w.svc.app, '/api/webhooks', json('POST', { broker_id: broker, url, event_types: types }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { endpoint_id: string; secret: string };
  };

  beforeAll(async () => {
    if (backend.skip) return;
    w = await buildChangeWorld(backend);
    const deps = w.svc.deps;
    runner = await startMonitoringRunner(monitoringProcessors(deps, w.state), {
      log: silentLogger,
      pollMs: 0,
      backoffBaseMs: 5,
      attempts: 5,
    });
    deps.monitoringJobs = runner;
  }, 240_000);
  afterAll(async () => {
    await runner?.close();
    for (const r of receivers) await r.close();
    await w?.close();
  });

  describe('signed webhooks', () => {
    it("pages an account's endpoints oldest first by an opaque cursor: every endpoint once, next and Link rel=next", async () => {
      const rx = await receiver();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await register('paged', `${rx.url}?n=${i}`)).endpoint_id);
      const seen: string[] = [];
      let url: string | null = '/api/webhooks?broker_id=paged&limit=2';
      while (url) {
        const r = await getJson(w.svc.app, url);
        expect(r.status).toBe(200);
        seen.push(...r.body.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id));
        expect(r.headers.get('link')).toBe(r.body.next ? `<${r.body.next}>; rel="next"` : null);
        url = r.body.next ? `${new URL(r.body.next).pathname}${new URL(r.body.next).search}` : null;
      }
      expect(seen).toEqual(ids);
      expect(await getJson(w.svc.app, '/api/webhooks?broker_id=paged&cursor=2')).toMatchObject({
        status: 400,
        body: { parameter: 'cursor' },
      });
    });

    it('delivers each change event of a new snapshot once, signed so the standardwebhooks verifier accepts it', async () => {
      const rx = await receiver();
      const ep = await register('hooked', rx.url);
      expect(ep.secret).toMatch(/^whsec_/);
      await addToWatchlist(w.state, 'broker:hooked', Object.values(w.changed), 'api', new Date());
      await markMonitoredSnapshot(w.state, w.prevId); // the runner last saw A; the reader serves B
      await runner.tick();
      await runner.idle();
      expect(rx.received).toHaveLength(3);
      const verifier = new Webhook(ep.secret);
      const dots = rx.received.map((r) => {
        const payload = verifier.verify(r.body, r.headers as Record<string, string>) as any;
        expect(payload.type).toBe('carrier.changed');
        expect(payload.data).toMatchObject({ prev_snapshot_id: w.prevId, next_snapshot_id: w.nextId });
        return payload.data.dot_number;
      });
      expect(dots.sort()).toEqual(Object.values(w.changed).sort());
      // The three deliveries, walked one a page by `next` (newest first, an opaque keyset cursor): each once.
      const walked: string[] = [];
      let url: string | null = '/api/webhooks/deliveries?broker_id=hooked&limit=1';
      while (url) {
        const page = await getJson(w.svc.app, url);
        walked.push(...page.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id));
        expect(page.headers.get('link')).toBe(page.body.next ? `<${page.body.next}>; rel="next"` : null);
        url = page.body.next ? `${new URL(page.body.next).pathname}${new URL(page.body.next).search}` : null;
      }
      const all = (await getJson(w.svc.app, '/api/webhooks/deliveries?broker_id=hooked')).body.deliveries;
      expect(walked).toEqual(all.map((d: { delivery_id: string }) => d.delivery_id));
      expect(walked).toHaveLength(3);
      // A tampered body or another secret fails verification.
      expect(() => verifier.verify(`${rx.received[0]!.body} `, rx.received[0]!.headers as Record<string, string>)).toThrow();
      expect(() =>
        new Webhook(`whsec_${Buffer.from('other-secret-other-secret').toString('base64')}`).verify(
          rx.received[0]!.body,
          rx.received[0]!.headers as Record<string, string>,
        ),
      ).toThrow();
      // Up to date now: another poll detects nothing and sends nothing.
      await runner.tick();
      await runner.idle();
      expect(rx.received).toHaveLength(3);
    });

    it('retries a receiver answering 500 three times with backoff; the event is accepted once, every attempt logged', async () => {
      const rx = await receiver((n) => (n <= 3 ? 500 : 200));
      const ep = await register('flaky', rx.url);
      const [id] = await emitEvent(
        w.state,
        runner,
        { message_id: 'msg_test_flaky', type: 'carrier.changed', data: { hello: 1 }, accounts: ['broker:flaky'] },
        new Date(),
      );
      await runner.idle();
      expect(rx.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
      expect(new Set(rx.received.map((r) => r.headers['webhook-id']))).toEqual(new Set(['msg_test_flaky']));
      const d = await getJson(w.svc.app, `/api/webhooks/deliveries/${id}?broker_id=flaky`);
      expect(d.body).toMatchObject({
        status: 'delivered',
        attempts: 4,
        endpoint_id: ep.endpoint_id,
        payload: { type: 'carrier.changed', data: { hello: 1 } },
      });
      expect(d.body.attempt_log.map((a: any) => [a.attempt, a.status_code, a.error])).toEqual([
        [1, 500, 'HTTP 500'],
        [2, 500, 'HTTP 500'],
        [3, 500, 'HTTP 500'],
        [4, 200, null],
      ]);
      const list = await getJson(w.svc.app, '/api/webhooks/deliveries?broker_id=flaky');
      expect(list.body.deliveries.map((x: any) => x.delivery_id)).toEqual([id]);
      expect(list.body).toMatchObject({ next_cursor: null, next: null });
      // The deliveries cursor is opaque (pagination.ts): a bare sequence number is a 400 naming `cursor`.
      expect(await getJson(w.svc.app, '/api/webhooks/deliveries?broker_id=flaky&cursor=5')).toMatchObject({
        status: 400,
        body: { parameter: 'cursor' },
      });
    });

    it('gives a delivery up after its last attempt and disables the endpoint with the reason; re-enabled, a manual redelivery arrives', async () => {
      let up = false;
      const rx = await receiver(() => (up ? 200 : 503));
      const ep = await register('down', rx.url);
      const [id] = await emitEvent(
        w.state,
        runner,
        { message_id: 'msg_test_down', type: 'carrier.changed', data: { n: 2 }, accounts: ['broker:down'] },
        new Date(),
      );
      await runner.idle();
      expect(rx.received).toHaveLength(5);
      const d = await getJson(w.svc.app, `/api/webhooks/deliveries/${id}?broker_id=down`);
      expect(d.body.status).toBe('failed');
      expect(d.body.attempt_log.map((a: any) => a.status_code)).toEqual([503, 503, 503, 503, 503]);
      for (const a of d.body.attempt_log) expect(a).toMatchObject({ error: 'HTTP 503', latency_ms: expect.any(Number) });
      const eps = await getJson(w.svc.app, '/api/webhooks?broker_id=down');
      expect(eps.body.endpoints[0]).toMatchObject({
        endpoint_id: ep.endpoint_id,
        status: 'disabled',
        disabled_reason: expect.stringMatching(/HTTP 503/),
      });
      const refused = await getJson(w.svc.app, `/api/webhooks/deliveries/${id}/redeliver?broker_id=down`, { method: 'POST' });
      expect(refused.status).toBe(400);
      up = true;
      const enable = (status: string) => json('PATCH', { status });
      expect((await getJson(w.svc.app, `/api/webhooks/${ep.endpoint_id}?broker_id=down`, enable('disabled'))).body.parameter).toBe(
        'status',
      );
      expect((await getJson(w.svc.app, `/api/webhooks/${ep.endpoint_id}?broker_id=down`, enable('active'))).body.status).toBe('active');
      // The former path stays served as a deprecated alias.
      expect((await getJson(w.svc.app, `/api/webhooks/${ep.endpoint_id}/enable?broker_id=down`, { method: 'POST' })).body.status).toBe(
        'active',
      );
      const again = await getJson(w.svc.app, `/api/webhooks/deliveries/${id}/redeliver?broker_id=down`, { method: 'POST' });
      expect(again.body).toMatchObject({ status: 'pending', enqueued: true });
      await runner.idle();
      expect(rx.received.at(-1)!.status).toBe(200);
      const after = await getJson(w.svc.app, `/api/webhooks/deliveries/${id}?broker_id=down`);
      expect(after.body).toMatchObject({ status: 'delivered', attempts: 6 });
    });

    it('sends care.event for custody events on the documents of the account that vetted the carrier', async () => {
      const rx = await receiver();
      const ep = await register('carrier-care', rx.url, ['care.event']);
      const vet = await getJson(w.svc.app, '/api/vet', json('POST', { broker_id: 'carrier-care', dot_number: w.changed.oos }));
      expect(vet.status).toBe(200);
      const doc = await getJson(
        w.svc.app,
        '/api/care',
        json('POST', {
          shipment: { ref: 'L-1', commodity: 'steel', value_usd: 1000 },
          parties: { broker: 'Broker Co', carrier: { dot_number: w.changed.oos } },
          vetting_id: vet.body.vetting_id,
        }),
      );
      expect(doc.status).toBe(201);
      const ev = await getJson(
        w.svc.app,
        `/api/care/${doc.body.document_id}/event`,
        json('POST', { stage: 'TENDER', actor: 'Dispatcher Ann', evidence: {} }),
      );
      expect(ev.status).toBe(201);
      await runner.idle();
      expect(rx.received).toHaveLength(1);
      const p = new Webhook(ep.secret).verify(rx.received[0]!.body, rx.received[0]!.headers as Record<string, string>) as any;
      expect(p).toMatchObject({
        type: 'care.event',
        data: { document_id: doc.body.document_id, seq: 1, stage: 'TENDER', hash: ev.body.hash },
      });
    });

    it('takes the served snapshot as the new baseline when the previous one is no longer on disk', async () => {
      await markMonitoredSnapshot(w.state, '20200101T000000000Z-pruned');
      await runner.tick();
      await runner.idle();
      expect(await lastMonitoredSnapshot(w.state)).toBe(w.nextId);
    });

    it('refuses receiver URLs on private, loopback and link-local addresses (400 naming url)', async () => {
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://10.1.2.3/x',
        'http://169.254.169.254/latest',
        'http://[::1]/x',
        'ftp://example.com/x',
      ]) {
        const r = await getJson(w.svc.app, '/api/webhooks', json('POST', { broker_id: 'ssrf', url, event_types: ['carrier.changed'] }));
        expect(r.status, url).toBe(400);
        expect(JSON.stringify(r.body), url).toMatch(/url/);
      }
      const run = await getJson(
        w.svc.app,
        '/api/webhooks',
        json('POST', { broker_id: 'ssrf', url: 'https://example.com/x', event_types: ['run.failed'] }),
      );
      expect(run.status).toBe(400);
      expect(JSON.stringify(run.body)).toMatch(/event_types/);
    });
  });
});
