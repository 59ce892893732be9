/** GET /api/company/{ticker}: layer 0 identity card (a CIK is accepted too). */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { originLeafSchema } from '../platform/answer-schemas.ts';
import { parseQuery } from '../platform/http.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { getIdentityCard } from './company.queries.ts';

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
  response: z.object({
    schema: z.literal('proofline/sec-company/v1'),
    layer: z.literal(0),
    identity: z.object({
      name: z.string(),
      cik: z.string().regex(/^\d+$/).describe('spec 000: digits as text'),
      cik_padded: z
        .string()
        .regex(/^\d{10}$/)
        .optional()
        .describe('detail=full'),
      ticker: z.string().nullable(),
      exchange: z.string().nullable(),
      sic: z.string().nullable(),
      sic_description: z.string().nullable(),
      state_of_incorporation: z.string().nullable(),
      headquarters: z.string().nullable(),
      fiscal_year_end: z.string().nullable().optional().describe('detail=full'),
      status: z.enum(['active', 'acquired', 'delisted', 'inactive']).describe('jobs/registry/derive-lookup.sql'),
      status_reason: z.string().nullable().optional().describe('detail=full'),
    }),
    summary: z.string(),
    peak_metrics: z.object({
      market_cap_usd: z.number().nullable(),
      employees: z.number().int().nullable(),
      market_cap_basis: z.string().nullable().optional().describe('detail=full'),
    }),
    tags: z.array(z.string()),
    deeper: z.object({ profile: z.string(), timeline: z.string(), filings: z.string() }),
    // Default: the short origin {leaf_hash, source} (the card stays near 200 tokens); detail=full: the whole leaf.
    origin: z.union([originLeafSchema, z.object({ leaf_hash: z.string().regex(/^[a-f0-9]{64}$/), source: z.string() })]),
  }),
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
