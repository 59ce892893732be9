import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { startMonitoringRunner } from '../../jobs/monitoring/monitoring.jobs.ts';
import { silentLogger } from '../../lib/log.ts';
import { monitoringProcessors } from '../../service/monitoring/monitoring.queries.ts';
import { createEndpoint, emitEvent, getDelivery } from '../../service/monitoring/webhooks.queries.ts';
import type { ServiceDeps } from '../../service/platform/deps.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { startReceiver } from './receiver.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'proofline-wh-bullmq-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(STATE_BACKENDS)('webhook deliveries as BullMQ jobs ($name state store)', (backend) => {
  it.skipIf(!HAS_REDIS || backend.skip)(
    'retries a failing receiver with BullMQ backoff and delivers once; the same job id enqueued twice is one job',
    async () => {
      const { store, dispose } = await backend.open();
      const rx = await startReceiver((n) => (n <= 2 ? 500 : 200));
      const deps = {
        readers: {},
        log: silentLogger,
        now: () => new Date(),
        startedAt: new Date(),
        options: { publicBaseUrl: 'http://x', snapshotStaleHours: 48, version: '0', dataDir: dir, webhookPrivateOrigins: [rx.origin] },
      } satisfies ServiceDeps as ServiceDeps;
      const runner = await startMonitoringRunner(monitoringProcessors(deps, store), {
        redisUrl: REDIS_URL,
        queuePrefix: `test-${randomUUID()}`,
        log: silentLogger,
        pollMs: 0,
        backoffBaseMs: 10,
        attempts: 5,
      });
      deps.monitoringJobs = runner;
      try {
        const ep = await createEndpoint(store, 'broker:bq', { url: rx.url, event_types: ['carrier.changed'] }, new Date(), {
          privateOrigins: [rx.origin],
        });
        const [id] = await emitEvent(
          store,
          runner,
          { message_id: 'msg_bq', type: 'carrier.changed', data: { q: 1 }, accounts: ['broker:bq'] },
          new Date(),
        );
        await runner.enqueueDelivery(id!); // same deterministic job id: no second job
        for (let i = 0; i < 500 && (await getDelivery(store, 'broker:bq', id!)).status === 'pending'; i++)
          await new Promise((r) => setTimeout(r, 20));
        await runner.idle();
        expect(rx.received.map((r) => r.status)).toEqual([500, 500, 200]);
        const d = await getDelivery(store, 'broker:bq', id!);
        expect(d).toMatchObject({ status: 'delivered', attempts: 3 });
        expect(new Webhook(ep.secret).verify(rx.received[2]!.body, rx.received[2]!.headers as Record<string, string>)).toMatchObject({
          data: { q: 1 },
        });
      } finally {
        await runner.close();
        await rx.close();
        await dispose();
      }
    },
    60_000,
  );
});
