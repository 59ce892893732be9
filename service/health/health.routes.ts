/**
 * GET /api/health (liveness: always 200 with `status` healthy or degraded;
 * load balancers read the body) and GET /api/ready (readiness: 200 or 503).
 * Neither is metered (service/platform/api-middleware.ts).
 */
import type { H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { healthAnswer, readinessAnswer } from './health.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { getHealth, getReadiness } from './health.queries.ts';
import { toFastResponse } from '../platform/response-finish.ts';

describeRoute({
  method: 'GET',
  path: '/api/health',
  family: 'health',
  metered: false,
  summary:
    'Liveness and health (never metered): 200 while the process answers, status healthy or degraded with reasons (stale snapshot, Redis down or slow); waits at most 500 ms on any dependency',
  responseDescription:
    '{status, uptime_seconds, timestamp, version, db (ok | stale | no_snapshot | none), db_detail (per domain), dependencies, dependency_detail, state_backend, reasons}',
  response: healthAnswer,
});

describeRoute({
  method: 'GET',
  path: '/api/ready',
  family: 'health',
  metered: false,
  summary: 'Readiness (never metered): 503 until every served snapshot is open and the state store answers, then 200',
  responseDescription: '{ready, snapshots, state_store, reasons}',
  statuses: [503],
  response: readinessAnswer,
});

/** Headers of both probes' answers: JSON, never stored by a cache between the prober and this process. */
const PROBE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;

export function registerHealthRoutes(app: H3, deps: ServiceDeps): void {
  // Both probes answer as a layer answer (written with one `end` by the node listener), as every metered route does
  // through api-middleware.ts. Returned as a plain object, health took h3's generic answer path, whose per-request node
  // request and response objects outlived the next scavenge: once a busy process's young generation had grown, each
  // scavenge under a stream of health requests promoted about 12 MB and paused 10-27 ms (issue 22, endpoints bench,
  // docs/benchmarks.md "Every read route").
  app.get('/api/health', async () =>
    toFastResponse({ status: 200, headers: { ...PROBE_HEADERS }, body: JSON.stringify(await getHealth(deps)) }),
  );
  app.get('/api/ready', async () => {
    const r = await getReadiness(deps);
    return toFastResponse({
      status: r.ready ? 200 : 503,
      headers: { ...PROBE_HEADERS, ...(r.ready ? {} : { 'retry-after': '5' }) },
      body: JSON.stringify(r),
    });
  });
}
