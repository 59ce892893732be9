/**
 * /ai/query: one entry point for agents over the warehouse, dispatching on
 * `type` to the transport-free query functions the REST API uses (so answers
 * are identical to /api/company/{ticker} and /api/carriers). Contract:
 * buildQueryContract in discovery.documents.ts (served at GET /ai/query
 * without parameters). `carrier` is offered only when this instance serves
 * the fmcsa domain.
 */
import { z } from 'zod';
import { NotFoundError, SourceUnavailableError } from '../../lib/errors.ts';
import { searchCarriers } from '../carriers/carriers.queries.ts';
import { getIdentityCard } from '../company/company.queries.ts';
import type { ServiceDeps } from '../platform/deps.ts';

export const AI_QUERY_TYPES = ['company', 'carrier'] as const;

export const aiQuerySchema = z.object({
  q: z.string().trim().min(1, 'q is required').max(200),
  type: z.enum(AI_QUERY_TYPES).default('company'),
});

export type AiQuery = z.infer<typeof aiQuerySchema>;

export interface AiQueryResponse {
  schema: 'proofline/ai-query/v1';
  query: { q: string; type: string };
  source: string;
  results: unknown[];
}

/** Whether /ai/query answers `type=carrier` on this instance. */
export function servesCarrierQueries(deps: ServiceDeps): boolean {
  return Boolean(deps.readers.fmcsa);
}

function reader(deps: ServiceDeps, domain: string) {
  const r = deps.readers[domain];
  if (!r) throw new SourceUnavailableError(`this instance does not serve ${domain} data`, { domain });
  return r;
}

/** Runs one agent query. Throws InvalidInputError (400), NotFoundError (404) or SourceUnavailableError (503) like the REST API. */
export async function runAiQuery(deps: ServiceDeps, query: AiQuery): Promise<AiQueryResponse> {
  switch (query.type) {
    case 'company': {
      const card = await getIdentityCard(reader(deps, 'registry'), deps.readers.quotes, query.q, deps.options.publicBaseUrl);
      return { schema: 'proofline/ai-query/v1', query, source: 'registry', results: [card] };
    }
    case 'carrier': {
      // A USDOT number, an MC/MX/FF docket, or else a carrier name (same parsing and ranking as GET /api/carriers).
      const q = query.q;
      const filter = /^\d{1,8}$/.test(q) ? { dot: q } : /^(MC|MX|FF)[-\s]?\d{1,8}$/i.test(q) ? { mc: q } : { name: q };
      const found = await searchCarriers(reader(deps, 'fmcsa'), { ...filter, limit: 10 });
      if (!found.results.length)
        throw new NotFoundError(`no carrier matches '${q}'`, {
          response: { q, hint: 'give a USDOT number, an MC docket or part of the legal name' },
        });
      return { schema: 'proofline/ai-query/v1', query, source: 'fmcsa', results: found.results };
    }
  }
}
