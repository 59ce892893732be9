/** GET /api/company/{ticker}: layer 0 identity card (a CIK is accepted too). */
import { getRouterParam, type H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { buildIdentityCard, findCompany } from './company.queries.ts';

describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}',
  family: 'company',
  summary: 'Layer 0 identity card (about 200 tokens); a CIK is accepted too',
  params: { ticker: 'ticker (AAPL, BRK-B) or CIK' },
  statuses: [400, 404, 503],
});

export function registerCompanyRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/company/:ticker', async (event) => {
    const company = await findCompany(readerFor(deps, 'registry'), getRouterParam(event, 'ticker') ?? '');
    return buildIdentityCard(company, deps.options.publicBaseUrl);
  });
}
