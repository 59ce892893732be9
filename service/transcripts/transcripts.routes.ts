/** GET /api/company/{ticker}/transcripts, /api/company/{ticker}/facts, /api/search/transcripts: thin routes over transcripts.queries.ts. */
import { withMembers } from '../../lib/objects.ts';
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { limitParam, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { factsAnswer, searchTranscriptsAnswer, transcriptsAnswer } from './transcripts.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import {
  FACTS_MAX,
  getCompanyFacts,
  getCompanyTranscripts,
  searchTranscripts,
  TRANSCRIPT_SEARCH_CATEGORIES,
} from './transcripts.queries.ts';

const factsQuery = z.object({
  type: z.string().optional().describe('metric | guidance | strategy'),
  topic: z
    .string()
    .optional()
    .describe('ai | blockchain | quantum | cloud | supply_chain | capital_return | tariffs | china | sustainability'),
  limit: limitParam(100, FACTS_MAX),
  cursor: cursorParam,
});
const searchQuery = factsQuery.extend({
  first: z.enum(['true', 'false']).optional().describe('true: first-mention date per company'),
  limit: limitParam(50, FACTS_MAX).describe(
    `rows of each list a page, max ${FACTS_MAX} (larger values are clamped); without it, 50 facts and every topic-company row`,
  ),
  category: z
    .enum(TRANSCRIPT_SEARCH_CATEGORIES)
    .optional()
    .describe('page one list alone: companies (the topic-company rows under `topics`) or facts; default: both, walked together by `next`'),
});
const transcriptsQuery = z.object({ limit: limitParam(200, 500), cursor: cursorParam });

export function registerTranscriptsRoutes(app: H3, deps: ServiceDeps): void {
  describeRoute({
    method: 'GET',
    path: '/api/company/{ticker}/transcripts',
    family: 'transcripts',
    summary: 'Earnings-call transcripts: count, titles, quarters, speakers, key metrics (pages: limit + cursor, next)',
    params: { ticker: 'ticker or CIK' },
    query: transcriptsQuery,
    statuses: [400, 404, 409, 503],
    response: transcriptsAnswer,
  });
  describeRoute({
    method: 'GET',
    path: '/api/company/{ticker}/facts',
    family: 'transcripts',
    summary: 'Facts extracted from transcripts (pages: limit + cursor, next)',
    params: { ticker: 'ticker or CIK' },
    query: factsQuery,
    statuses: [400, 404, 409, 503],
    response: factsAnswer,
  });
  describeRoute({
    method: 'GET',
    path: '/api/search/transcripts',
    family: 'transcripts',
    summary:
      'Search transcript facts by topic and type; first=true: first-mention date per company (pages: limit + cursor, next walks the companies and facts lists together; category pages one)',
    query: searchQuery,
    statuses: [400, 409, 503],
    response: searchTranscriptsAnswer,
  });
  const tdeps = () => ({ transcripts: readerFor(deps, 'transcripts'), registry: deps.readers.registry });
  const base = () => deps.options.publicBaseUrl;
  app.get('/api/company/:ticker/transcripts', async (event) =>
    pagedResponse(
      event,
      await getCompanyTranscripts(tdeps(), getRouterParam(event, 'ticker') ?? '', parseQuery(event, transcriptsQuery)),
      base(),
    ),
  );
  app.get('/api/company/:ticker/facts', async (event) =>
    pagedResponse(event, await getCompanyFacts(tdeps(), getRouterParam(event, 'ticker') ?? '', parseQuery(event, factsQuery)), base()),
  );
  app.get('/api/search/transcripts', async (event) => {
    const q = parseQuery(event, searchQuery);
    return pagedResponse(event, await searchTranscripts(tdeps(), withMembers(q, { first: q.first === 'true' })), base());
  });
}
