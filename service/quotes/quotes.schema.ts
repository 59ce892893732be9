/**
 * Answer schemas of the quote routes (/api/company/{ticker}/quote and /quote/history): OpenAPI components of their
 * 200 bodies, checked against live answers by test/api/openapi-conformance.test.ts. Names and types are the served
 * ones (spec 000 "stock quote", test/contract/spec-000.table.ts; quotes.queries.ts QuoteDay and MarketContext).
 */
import { z } from 'zod';
import { limitClampedSchema, originLeafSchema, pageMembers } from '../platform/answer-schemas.ts';

const adjustment = z.enum(['raw', 'split_dividend']);
const strN = z.string().nullable();
const bar = z.object({
  open: z.number(),
  high: z.number(),
  low: z.number(),
  close: z.number(),
  volume: z.number(),
  vwap: z.number().nullable(),
  trade_count: z.number().nullable(),
});
const day = {
  quote_date: z.string(),
  adjustment,
  quote: bar,
  flags: z.array(z.string()),
  origin: originLeafSchema,
  origin_verified: z.boolean().describe('false when the row no longer hashes to its stored leaf'),
};
const head = { schema: z.literal('proofline/stock-quote/v1'), ticker: z.string(), name: strN };

export const quoteAnswer = z.object({
  ...head,
  ...day,
  market_context: z.object({
    market_cap: z.number().nullable(),
    shares_outstanding: z.number().nullable(),
    shares_as_of: strN,
    shares_filed: strN,
    employees: z.number().int().nullable(),
    employees_as_of: strN,
    employees_source: strN,
    note: z.string(),
    origin: originLeafSchema.nullable(),
  }),
});

export const quoteHistoryAnswer = z.object({
  ...head,
  adjustment,
  count: z.number().int(),
  limit: z.number().int(),
  limit_clamped: limitClampedSchema,
  from: strN,
  chain: z.object({ first_date: z.string(), last_date: z.string(), days: z.number().int(), rule: z.string() }),
  quotes: z.array(z.object(day)),
  ...pageMembers,
});
