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
const servedBar = z.object({ quote: bar, origin: originLeafSchema, origin_verified: z.boolean() });
/** Added field (spec 000 names none of these): how a stale split_dividend day was re-derived from a split. */
const splitAdjustment = z
  .object({
    status: z.literal('stale'),
    split_factor: z.number(),
    record: z.record(z.string(), z.unknown()).describe('the record hashed into origin.record_sha256'),
    raw: servedBar.describe('the raw bar the values were derived from, with its chained leaf (origin.parent)'),
    stored: servedBar.describe('the stored adjusted bar (fetched before the split) and its chained leaf'),
    splits: z.array(
      z.object({
        ex_date: z.string(),
        split_from: z.number(),
        split_to: z.number(),
        file: z.string(),
        origin: originLeafSchema.nullable(),
      }),
    ),
  })
  .nullable()
  .describe('null when quote is the stored bar; set when it was re-derived from the raw bar and the splits after it');
const day = {
  quote_date: z.string(),
  adjustment,
  quote: bar,
  flags: z.array(z.string()),
  origin: originLeafSchema,
  origin_verified: z.boolean().describe('false when the row no longer hashes to its stored leaf'),
  split_adjustment: splitAdjustment,
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
  split_adjusted_days: z.number().int().describe('served days re-derived from a split (split_adjustment set)'),
  quotes: z.array(z.object(day)),
  ...pageMembers,
});
