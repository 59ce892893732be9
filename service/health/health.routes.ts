/** GET /api/health: always 200 with `status` healthy or degraded (load balancers read the body). */
import type { H3 } from 'h3';
import type { ServiceDeps } from '../deps.ts';
import { getHealth } from './health.queries.ts';

export function registerHealthRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/health', () => getHealth(deps));
}
