/**
 * GET /api/company/{ticker}/quote and /quote/history: thin routes over
 * quotes.queries.ts. `adjustment` (raw | split_dividend) picks the series; by
 * default the series with the newest bar (raw preferred on ties) is served and
 * the response names it.
 */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { quoteAnswer, quoteHistoryAnswer } from './quotes.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { getLatestQuote, getQuoteHistory, HISTORY_DEFAULT, HISTORY_MAX } from './quotes.queries.ts';

const adjustment = z.enum(['raw', 'split_dividend']).optional().describe('price series: raw (as traded) or split_dividend (adjusted)');
const quoteQuery = z.object({ adjustment });
const historyQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`days, default ${HISTORY_DEFAULT}, max ${HISTORY_MAX} (larger values are clamped and the response says so)`),
  from: z.iso
    .date('expected a calendar date YYYY-MM-DD')
    .optional()
    .describe(
      'start date: the first page is the `limit` trading days from it and `next` goes forward in time; without it the first page is the latest days and `next` goes back',
    ),
  adjustment,
  cursor: cursorParam,
});

export function registerQuotesRoutes(app: H3, deps: ServiceDeps): void {
  describeRoute({
    method: 'GET',
    path: '/api/company/{ticker}/quote',
    family: 'quotes',
    summary: 'Latest daily bar with market context and origin',
    params: { ticker: 'ticker or CIK' },
    query: quoteQuery,
    statuses: [400, 404, 503],
    response: quoteAnswer,
  });
  describeRoute({
    method: 'GET',
    path: '/api/company/{ticker}/quote/history',
    family: 'quotes',
    summary: 'Daily quotes, newest first, each with its chained origin leaf (pages: limit + cursor, next)',
    params: { ticker: 'ticker or CIK' },
    query: historyQuery,
    statuses: [400, 404, 503],
    response: quoteHistoryAnswer,
  });
  const qdeps = () => ({ quotes: readerFor(deps, 'quotes'), registry: deps.readers.registry });
  app.get('/api/company/:ticker/quote', async (event) => {
    const q = parseQuery(event, quoteQuery);
    return getLatestQuote(qdeps(), getRouterParam(event, 'ticker') ?? '', q);
  });
  app.get('/api/company/:ticker/quote/history', async (event) => {
    const q = parseQuery(event, historyQuery);
    return pagedResponse(event, await getQuoteHistory(qdeps(), getRouterParam(event, 'ticker') ?? '', q), deps.options.publicBaseUrl);
  });
}
