/** GET /api/company/{ticker}: layer 0 identity card (a CIK is accepted too). */
import { getRouterParam, type H3 } from 'h3';
import type { ServiceDeps } from '../deps.ts';
import { readerFor } from '../deps.ts';
import { buildIdentityCard, findCompany } from './company.queries.ts';

export function registerCompanyRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/company/:ticker', async (event) => {
    const company = await findCompany(readerFor(deps, 'registry'), getRouterParam(event, 'ticker') ?? '');
    return buildIdentityCard(company, deps.options.publicBaseUrl);
  });
}
