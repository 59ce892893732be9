/**
 * /admin/queues: Bull Board over every queue, mounted in the h3 app only with
 * a dashboard dependency, behind ADMIN_TOKEN (Bearer, cookie, or ?token= once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQueues, enqueueRun, getQueue, registerExtraPipelines } from '../../jobs/bullmq.ts';
import { jobIdFor } from '../../jobs/pipeline.ts';
import { createQueueDashboard, type QueueDashboard } from '../../service/admin/queue-dashboard.ts';
import { SERVED_DOMAINS } from '../../service/main.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { HAS_REDIS, REDIS_URL } from '../helpers/redis.ts';
import { opstestPipeline } from './fixtures/opstest.pipeline.ts';
import { uniquePrefix } from './ops-helpers.ts';

const TOKEN = 'test-admin-token-0123456789';

describe('/admin/queues without Redis', () => {
  it('is not mounted when the service has no dashboard', async () => {
    const dir = await tempDir();
    const svc = await buildTestService(testConfig(dir), []);
    const r = await getJson(svc.app, '/admin/queues', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(r.status).toBe(404);
    await svc.close();
    await removeDir(dir);
  });
});

describe.skipIf(!HAS_REDIS)('/admin/queues (Bull Board)', () => {
  let svc: TestService;
  let dashboard: QueueDashboard;
  let dir: string;
  let prefix: string;
  beforeAll(async () => {
    registerExtraPipelines([opstestPipeline]);
    dir = await tempDir();
    prefix = uniquePrefix('dash');
    const config = testConfig(dir, { REDIS_URL: REDIS_URL!, QUEUE_PREFIX: prefix });
    await enqueueRun(config, 'opstest', { runId: 'opstest-dash-run', inputDir: dir });
    await getQueue(config, 'opstest').add('opstest:load', { runId: 'x' }, { jobId: jobIdFor('opstest', 'load', 'x', 'broken') });
    // The API process passes the domains it serves; this one also shows the test pipeline's queue.
    dashboard = createQueueDashboard(config, TOKEN, [...SERVED_DOMAINS, 'opstest']);
    svc = await buildTestService(config, [], { queueDashboard: dashboard });
  });
  afterAll(async () => {
    await svc?.close();
    await dashboard?.close();
    await closeQueues();
    await removeDir(dir);
  });

  it('refuses requests without the admin token', async () => {
    expect((await getJson(svc.app, '/admin/queues')).status).toBe(401);
    expect((await getJson(svc.app, '/admin/queues/api/queues', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await getJson(svc.app, '/admin/queues?token=wrong')).status).toBe(401);
  });

  it('serves the UI and lists every queue with its jobs to a Bearer token', async () => {
    const page = await svc.app.fetch(new Request('http://proofline.test/admin/queues', { headers: { authorization: `Bearer ${TOKEN}` } }));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/<base href="\/admin\/queues\/?"/);
    const asset = html.match(/static\/js\/main[^"']+\.js/)![0];
    const js = await svc.app.fetch(
      new Request(`http://proofline.test/admin/queues/${asset}`, { headers: { authorization: `Bearer ${TOKEN}` } }),
    );
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);

    const api = await getJson(
      svc.app,
      '/admin/queues/api/queues?activeQueue=' + encodeURIComponent(`${prefix}-opstest`) + '&status=waiting',
      { headers: { authorization: `Bearer ${TOKEN}` } },
    );
    expect(api.status).toBe(200);
    const names = (api.body.queues as Array<{ name: string }>).map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining([`${prefix}-opstest`, `${prefix}-registry`, `${prefix}-sec`]));
    const q = (api.body.queues as Array<{ name: string; jobs: Array<{ id: string; name: string }> }>).find(
      (x) => x.name === `${prefix}-opstest`,
    )!;
    expect(q.jobs.map((j) => j.id)).toEqual(expect.arrayContaining(['opstest:plan:opstest-dash-run']));
  });

  it('moves a ?token= into an HttpOnly cookie that then authorises the browser', async () => {
    const r = await svc.app.fetch(new Request(`http://proofline.test/admin/queues?token=${TOKEN}`));
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/admin/queues');
    const cookie = r.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).not.toContain(TOKEN); // a digest, never the raw admin token
    expect(cookie).not.toMatch(/Secure/); // plain HTTP here
    const https = await svc.app.fetch(
      new Request(`http://proofline.test/admin/queues?token=${TOKEN}`, { headers: { 'x-forwarded-proto': 'https' } }),
    );
    expect(https.headers.get('set-cookie')).toMatch(/; Secure/);
    const ok = await svc.app.fetch(
      new Request('http://proofline.test/admin/queues/api/queues', { headers: { cookie: cookie.split(';')[0]! } }),
    );
    expect(ok.status).toBe(200);
  });
});
