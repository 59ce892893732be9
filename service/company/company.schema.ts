/**
 * Answer schema of the identity card (GET /api/company/{ticker}, layer 0; also the company results of /ai/query and
 * the MCP sec_company tool): the OpenAPI component of its body, checked against live answers by
 * test/api/openapi-conformance.test.ts and pinned by spec 000 (test/contract/spec-000.table.ts).
 */
import { z } from 'zod';
import { originLeafSchema } from '../platform/answer-schemas.ts';

export const identityCardAnswer = z.object({
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
});
