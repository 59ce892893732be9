/**
 * A webhook sender in its own process, for the kill -9 test: opens the state
 * store at argv[2] (a DuckDB file, or a `postgres://` URL: PostgreSQL) and runs the in-process monitoring runner (which re-enqueues
 * pending deliveries when it starts). `setup <url>` registers an endpoint and
 * emits one event first. Prints JSON lines: {secret}, {delivered}.
 */
import { startMonitoringRunner } from '../../jobs/monitoring/monitoring.jobs.ts';
import { silentLogger } from '../../lib/log.ts';
import { monitoringProcessors } from '../../service/monitoring/monitoring.queries.ts';
import { createEndpoint, emitEvent, listDeliveries } from '../../service/monitoring/webhooks.queries.ts';
import type { ServiceDeps } from '../../service/platform/deps.ts';
import { PgStateStore } from '../../service/platform/state.postgres.ts';
import { StateStore } from '../../service/platform/state.store.ts';

const [file, mode, url] = process.argv.slice(2) as [string, string, string | undefined];
const store = file.startsWith('postgres') ? await PgStateStore.open(file) : await StateStore.open(file);
const origin = new URL(url ?? process.env.RECEIVER_ORIGIN!).origin;
const deps = {
  readers: {},
  log: silentLogger,
  now: () => new Date(),
  startedAt: new Date(),
  options: { publicBaseUrl: 'http://x', snapshotStaleHours: 48, version: '0', dataDir: '/nonexistent', webhookPrivateOrigins: [origin] },
} satisfies ServiceDeps as ServiceDeps;
const runner = await startMonitoringRunner(monitoringProcessors(deps, store), {
  log: silentLogger,
  pollMs: 0,
  backoffBaseMs: 50,
  attempts: 5,
});
deps.monitoringJobs = runner;
if (mode === 'setup') {
  const ep = await createEndpoint(store, 'broker:k9', { url: url!, event_types: ['carrier.changed'] }, new Date(), {
    privateOrigins: [origin],
  });
  console.log(JSON.stringify({ secret: ep.secret }));
  await emitEvent(
    store,
    runner,
    { message_id: 'msg_kill9', type: 'carrier.changed', data: { survived: true }, accounts: ['broker:k9'] },
    new Date(),
  );
}
for (;;) {
  const d = await listDeliveries(store, 'broker:k9', { limit: 10 });
  if (d.deliveries.some((x) => x.status === 'delivered')) {
    console.log(JSON.stringify({ delivered: d.deliveries[0] }));
    await runner.close();
    await store.close();
    process.exit(0);
  }
  await new Promise((r) => setTimeout(r, 50));
}
