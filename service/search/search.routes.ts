/** GET /api/search?q=&limit=: companies, people and timeline events matching every word of `q`, ranked. */
import { withMembers } from '../../lib/objects.ts';
import type { H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { clampLimit, parseQuery } from '../platform/http.ts';
import { searchAnswer } from './search.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { SEARCH_CATEGORIES, searchRegistry } from './search.queries.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { companyIndex } from './company-index.ts';
import { textIndexes } from './text-index.ts';

export const SEARCH_LIMIT_DEFAULT = 10;
export const SEARCH_LIMIT_MAX = 50;

const searchQuery = z.object({
  q: z
    .string({ error: "parameter 'q' is required" })
    .trim()
    .min(1, "parameter 'q' is required")
    .max(200)
    .describe('words to find (all must match); case-insensitive'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`results per category a page (default ${SEARCH_LIMIT_DEFAULT}, max ${SEARCH_LIMIT_MAX}; larger values are clamped)`),
  category: z
    .enum(SEARCH_CATEGORIES)
    .optional()
    .describe('page one list alone (the other two are then empty); default: the three lists, walked together by `next`'),
  cursor: cursorParam,
});

describeRoute({
  method: 'GET',
  path: '/api/search',
  family: 'search',
  summary:
    'Search companies (name, summary, tags), people (name, notes) and timeline events; ranked (pages: limit + cursor, next walks the three lists together; category pages one)',
  query: searchQuery,
  response: searchAnswer,
  statuses: [400, 409, 503],
});

export function registerSearchRoutes(app: H3, deps: ServiceDeps): void {
  // Build the in-memory search indexes as soon as a snapshot is served (and again after each swap), not on the first query.
  // The first build is a warm-up the server awaits before listening (main.ts): besides sparing the first searches,
  // requests served while this heavy build runs left node's own process.nextTick with megamorphic inline caches
  // for the life of the process (seen with %DebugPrint; about 5 % of every later request, also for a bare
  // node:http handler in the same process).
  const registry = deps.readers.registry;
  if (registry) {
    const warm = () =>
      Promise.all([companyIndex(registry), textIndexes(registry)]).catch((err) => deps.log.warn({ err }, 'search index build failed'));
    registry.onSwap(() => void warm());
    if (registry.manifest) (deps.warmups ??= []).push(warm());
  }
  app.get('/api/search', async (event) => {
    const q = parseQuery(event, searchQuery);
    const { limit, clamped } = clampLimit(q.limit, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX);
    const res = await searchRegistry(
      readerFor(deps, 'registry'),
      { q: q.q, limit, cursor: q.cursor, category: q.category },
      deps.options.publicBaseUrl,
    );
    return pagedResponse(event, withMembers(res, { limit, ...(clamped ? { limit_clamped: clamped } : {}) }), deps.options.publicBaseUrl);
  });
}
