/** GET /api/company/{ticker}: layer 0 identity card (a CIK is accepted too). */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { parseQuery } from '../platform/http.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { getIdentityCard } from './company.queries.ts';
import { identityCardAnswer } from './company.schema.ts';

const cardQuery = z.object({
  detail: z
    .enum(['default', 'full'])
    .optional()
    .describe(
      'full adds cik_padded, fiscal_year_end, status_reason, the market-cap basis and the whole origin leaf (default: about 200 tokens)',
    ),
});

describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}',
  family: 'company',
  summary: 'Layer 0 identity card (about 200 tokens); a CIK is accepted too',
  params: { ticker: 'ticker (AAPL, BRK-B) or CIK' },
  query: cardQuery,
  response: identityCardAnswer,
  statuses: [400, 404, 503],
});

export function registerCompanyRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/company/:ticker', async (event) => {
    const q = parseQuery(event, cardQuery);
    return getIdentityCard(
      readerFor(deps, 'registry'),
      deps.readers.quotes,
      getRouterParam(event, 'ticker') ?? '',
      deps.options.publicBaseUrl,
      q.detail,
    );
  });
}
