import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, it as base, describe, expect } from 'vitest';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { RunFailedError, runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { startMonitoringRunner, type MonitoringRunner } from '../../jobs/monitoring/monitoring.jobs.ts';
import { silentLogger } from '../../lib/log.ts';
import { readRunNotices } from '../../lib/run-notice.ts';
import { monitoringProcessors } from '../../service/monitoring/monitoring.queries.ts';
import { getJson } from '../helpers/app.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';
import { startReceiver, type Receiver } from './receiver.ts';

describe.each(STATE_BACKENDS)('run notifications ($name state store)', (backend) => {
  const it = base.skipIf(backend.skip);
  let w: World;
  let runner: MonitoringRunner;
  let rx: Receiver;
  let secret: string;
  const ADMIN = 'admin-token-for-tests';

  beforeAll(async () => {
    if (backend.skip) return;
    w = await buildWorld({}, {}, backend);
    w.svc.deps.options.adminToken = ADMIN;
    rx = await startReceiver();
    w.svc.deps.options.webhookPrivateOrigins = [rx.origin];
    runner = await startMonitoringRunner(monitoringProcessors(w.svc.deps, w.state), {
      log: silentLogger,
      pollMs: 0,
      backoffBaseMs: 5,
      attempts: 3,
    });
    w.svc.deps.monitoringJobs = runner;
    await runner.tick(); // imports the first run's notice before the operator has an endpoint: nothing to send
    const r = await getJson(w.svc.app, '/admin/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ url: rx.url, event_types: ['run.published', 'run.failed'] }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    secret = r.body.secret;
  }, 240_000);
  afterAll(async () => {
    await runner?.close();
    await rx?.close();
    await w?.close();
  });

  describe('run notifications', () => {
    it('sends run.published with domain, run id, snapshot and counts to the operator endpoint', async () => {
      // A full run (every file parsed again): an incremental one over the same files would report 0 rows parsed.
      await runPipelineInProcess(fmcsaPipeline, {
        config: w.config,
        log: silentLogger,
        inputDir: path.join(w.root, 'input'),
        force: true,
        full: true,
        backoffMs: 1,
      });
      await runner.tick();
      await runner.idle();
      expect(rx.received).toHaveLength(1);
      const p = new Webhook(secret).verify(rx.received[0]!.body, rx.received[0]!.headers as Record<string, string>) as any;
      expect(p.type).toBe('run.published');
      expect(p.data).toMatchObject({
        domain: 'fmcsa',
        run_id: expect.stringMatching(/^fmcsa-/),
        snapshot_id: expect.any(String),
        failed_children: [],
      });
      expect(p.data.counts.rows).toBeGreaterThan(0);
      expect(await readRunNotices(w.config.dataDir)).toEqual([]); // imported notices leave the outbox
    });

    it('sends run.failed naming the failed required child when a required input is broken', async () => {
      // The registry run with a malformed required input (the ticker file), as in test/foundation/pipeline.test.ts.
      const broken = path.join(w.root, 'registry-input');
      await ensureSample(broken, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
      writeFileSync(path.join(broken, 'sec', 'tickers', 'company_tickers_exchange.json'), '{"fields": ["cik"], "data": [[1,');
      await expect(
        runPipelineInProcess(registryPipeline, { config: w.config, log: silentLogger, inputDir: broken, backoffMs: 1 }),
      ).rejects.toThrow(RunFailedError);
      await runner.tick();
      await runner.idle();
      const last = rx.received.at(-1)!;
      const p = new Webhook(secret).verify(last.body, last.headers as Record<string, string>) as any;
      expect(p.type).toBe('run.failed');
      expect(p.data).toMatchObject({ domain: 'registry', snapshot_id: null, error: expect.stringMatching(/ticker/i) });
      expect(p.data.failed_children.length).toBeGreaterThan(0);
      const list = await getJson(w.svc.app, '/admin/webhooks/deliveries', { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(list.body.deliveries.map((d: any) => d.event_type)).toEqual(['run.failed', 'run.published']);
    });

    it('keeps the operator endpoints behind the admin token', async () => {
      expect((await getJson(w.svc.app, '/admin/webhooks')).status).toBe(401);
      expect((await getJson(w.svc.app, '/admin/webhooks', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    });
  });
});
