/** Answer schemas of /api/stats and /api/ir/rankings: OpenAPI components of their bodies, checked live by test/api/openapi-conformance.test.ts. */
import { z } from 'zod';
import { pageMembers } from '../platform/answer-schemas.ts';

const platforms = z.object({ openai: z.number(), anthropic: z.number(), perplexity: z.number(), google: z.number(), other_ai: z.number() });

export const statsAnswer = z.object({
  totals: z.object({
    companies: z.number(),
    active_companies: z.number(),
    people: z.number().nullable(),
    products: z.number().nullable(),
    partnerships: z.number().nullable(),
    filings: z.number().nullable(),
  }),
  snapshot_id: z.string().nullable(),
  ai_queries_24h: z.object({
    window_hours: z.number(),
    total_requests: z.number(),
    total_ai: z.number(),
    by_platform: platforms,
    by_agent_type: z.record(z.string(), z.number()),
  }),
  generated_at: z.string(),
});

export const rankingsAnswer = z.object({
  days: z.number(),
  limit: z.number(),
  limit_clamped: z.object({ requested: z.number(), max: z.number() }).optional(),
  days_clamped: z.object({ requested: z.number(), max: z.number() }).optional(),
  rankings: z.array(
    z.object({
      rank: z.number(),
      ticker: z.string(),
      name: z.string().nullable(),
      ai_queries: z.number(),
      distinct_clients: z.number(),
      by_platform: platforms,
      last_queried_at: z.string(),
    }),
  ),
  generated_at: z.string(),
  ...pageMembers,
});
