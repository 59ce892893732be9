/** GET /api/health: always 200 with `status` healthy or degraded (load balancers read the body). */
import type { H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { getHealth } from './health.queries.ts';

describeRoute({
  method: 'GET',
  path: '/api/health',
  family: 'health',
  summary: 'Service health: healthy or degraded (with reasons: stale snapshot, Redis down), uptime, snapshot ages',
  responseDescription:
    '{status, uptime_seconds, timestamp, version, db (ok | stale | no_snapshot | none), db_detail (per domain), dependencies, reasons}',
});

export function registerHealthRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/health', () => getHealth(deps));
}
