/** GET /api/company/{ticker}/transcripts, /api/company/{ticker}/facts, /api/search/transcripts: thin routes over transcripts.queries.ts. */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { parseQuery } from '../platform/http.ts';
import { factsAnswer, searchTranscriptsAnswer, transcriptsAnswer } from './transcripts.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { getCompanyFacts, getCompanyTranscripts, searchTranscripts } from './transcripts.queries.ts';

const factsQuery = z.object({
  type: z.string().optional().describe('metric | guidance | strategy'),
  topic: z
    .string()
    .optional()
    .describe('ai | blockchain | quantum | cloud | supply_chain | capital_return | tariffs | china | sustainability'),
  limit: z.coerce.number().int().min(1).optional(),
});
const searchQuery = factsQuery.extend({ first: z.enum(['true', 'false']).optional().describe('true: first-mention date per company') });

export function registerTranscriptsRoutes(app: H3, deps: ServiceDeps): void {
  describeRoute({
    method: 'GET',
    path: '/api/company/{ticker}/transcripts',
    family: 'transcripts',
    summary: 'Earnings-call transcripts: count, titles, quarters, speakers, key metrics',
    params: { ticker: 'ticker or CIK' },
    statuses: [400, 404, 503],
    response: transcriptsAnswer,
  });
  describeRoute({
    method: 'GET',
    path: '/api/company/{ticker}/facts',
    family: 'transcripts',
    summary: 'Facts extracted from transcripts',
    params: { ticker: 'ticker or CIK' },
    query: factsQuery,
    statuses: [400, 404, 503],
    response: factsAnswer,
  });
  describeRoute({
    method: 'GET',
    path: '/api/search/transcripts',
    family: 'transcripts',
    summary: 'Search transcript facts by topic and type; first=true: first-mention date per company',
    query: searchQuery,
    statuses: [400, 503],
    response: searchTranscriptsAnswer,
  });
  const tdeps = () => ({ transcripts: readerFor(deps, 'transcripts'), registry: deps.readers.registry });
  app.get('/api/company/:ticker/transcripts', async (event) => getCompanyTranscripts(tdeps(), getRouterParam(event, 'ticker') ?? ''));
  app.get('/api/company/:ticker/facts', async (event) =>
    getCompanyFacts(tdeps(), getRouterParam(event, 'ticker') ?? '', parseQuery(event, factsQuery)),
  );
  app.get('/api/search/transcripts', async (event) => {
    const q = parseQuery(event, searchQuery);
    return searchTranscripts(tdeps(), { ...q, first: q.first === 'true' });
  });
}
