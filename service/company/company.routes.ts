/** GET /api/company/{ticker}: layer 0 identity card (a CIK is accepted too). */
import { getRouterParam, type H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { z } from 'zod';
import { originLeafSchema } from '../platform/answer-schemas.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { buildIdentityCard, findCompany } from './company.queries.ts';

describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}',
  family: 'company',
  summary: 'Layer 0 identity card (about 200 tokens); a CIK is accepted too',
  params: { ticker: 'ticker (AAPL, BRK-B) or CIK' },
  response: z.object({
    schema: z.literal('proofline/sec-company/v1'),
    layer: z.literal(0),
    identity: z.object({
      name: z.string(),
      cik: z.number().int(),
      cik_padded: z.string().regex(/^\d{10}$/),
      ticker: z.string().nullable(),
      exchange: z.string().nullable(),
      sic: z.string().nullable(),
      sic_description: z.string().nullable(),
      state_of_incorporation: z.string().nullable(),
      headquarters: z.string().nullable(),
      fiscal_year_end: z.string().nullable(),
      status: z.enum(['active', 'acquired', 'delisted', 'inactive']).describe('jobs/registry/derive-lookup.sql'),
      status_reason: z.string().nullable(),
    }),
    summary: z.string(),
    peak_metrics: z.object({ market_cap_usd: z.number().nullable(), employees: z.number().nullable() }),
    tags: z.array(z.string()),
    deeper: z.object({ profile: z.string(), timeline: z.string(), filings: z.string() }),
    origin: originLeafSchema,
  }),
  statuses: [400, 404, 503],
});

export function registerCompanyRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/company/:ticker', async (event) => {
    const company = await findCompany(readerFor(deps, 'registry'), getRouterParam(event, 'ticker') ?? '');
    return buildIdentityCard(company, deps.options.publicBaseUrl);
  });
}
