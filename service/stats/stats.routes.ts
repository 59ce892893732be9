/**
 * GET /api/stats: registry totals and 24-hour AI-agent query counts by platform.
 * GET /api/ir/rankings?days=&limit=: companies ranked by AI-agent query volume.
 */
import type { H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { clampLimit, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { statsAnswer, rankingsAnswer } from './stats.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { apiKeyRepositoryFor } from '../platform/api-keys.state.ts';
import { UsageService } from '../platform/usage.service.ts';
import { aiQueryCounts, rankCompanies, registryTotals } from './stats.queries.ts';

export const RANKINGS_LIMIT_DEFAULT = 100;
export const RANKINGS_LIMIT_MAX = 500;
export const RANKINGS_DAYS_DEFAULT = 30;
export const RANKINGS_DAYS_MAX = 365;

const rankingsQuery = z.object({
  days: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`window in days (default ${RANKINGS_DAYS_DEFAULT}, max ${RANKINGS_DAYS_MAX}; larger values are clamped)`),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`companies a page (default ${RANKINGS_LIMIT_DEFAULT}, max ${RANKINGS_LIMIT_MAX}; larger values are clamped)`),
  cursor: cursorParam,
});

describeRoute({
  method: 'GET',
  path: '/api/stats',
  family: 'stats',
  summary: 'Registry totals (companies, people, products, partnerships, filings) and 24-hour AI-agent query counts by platform',
  response: statsAnswer,
  statuses: [503],
});
describeRoute({
  method: 'GET',
  path: '/api/ir/rankings',
  family: 'stats',
  summary:
    'Companies ranked by AI-agent query volume (successful /api/company/* requests from AI agents); pages: limit + cursor, next (the cursor pins the window)',
  query: rankingsQuery,
  response: rankingsAnswer,
  statuses: [400],
});

async function usageOf(deps: ServiceDeps): Promise<UsageService> {
  // The API layer creates deps.usage on the first /api request, which always precedes these handlers.
  if (deps.usage) return deps.usage;
  deps.usage = await UsageService.create({ dataDir: deps.options.dataDir, log: deps.log, keyRepository: apiKeyRepositoryFor(deps.state) });
  return deps.usage;
}

export function registerStatsRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/stats', async () => {
    const registry = deps.readers.registry;
    const usage = await usageOf(deps);
    const now = deps.now();
    const totals = registry?.manifest ? await registryTotals(registry) : null;
    return {
      totals,
      snapshot_id: registry?.manifest?.snapshot_id ?? null,
      ai_queries_24h: await aiQueryCounts(usage.queryLog, now.getTime(), 24),
      generated_at: now.toISOString(),
    };
  });
  app.get('/api/ir/rankings', async (event) => {
    const q = parseQuery(event, rankingsQuery);
    const { limit, clamped } = clampLimit(q.limit, RANKINGS_LIMIT_DEFAULT, RANKINGS_LIMIT_MAX);
    const d = clampLimit(q.days, RANKINGS_DAYS_DEFAULT, RANKINGS_DAYS_MAX);
    const usage = await usageOf(deps);
    const now = deps.now();
    const page = await rankCompanies(usage.queryLog, deps.readers.registry, now.getTime(), d.limit, limit, q.cursor);
    return pagedResponse(
      event,
      {
        days: d.limit,
        limit,
        ...(clamped ? { limit_clamped: clamped } : {}),
        ...(d.clamped ? { days_clamped: d.clamped } : {}),
        rankings: page.rankings,
        generated_at: now.toISOString(),
        next_cursor: page.next_cursor,
      },
      deps.options.publicBaseUrl,
    );
  });
}
