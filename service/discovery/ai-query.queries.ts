/**
 * /ai/query: one entry point for agents over the warehouse, dispatching on
 * `type` to the transport-free query functions the REST API uses (so answers
 * are identical, origin leaves included). Contract: buildQueryContract in
 * discovery.documents.ts (served at GET /ai/query without parameters).
 * Carrier data is not wired yet: only `company` (registry) is served.
 */
import { z } from 'zod';
import { buildIdentityCard, findCompany } from '../company/company.queries.ts';
import { readerFor, type ServiceDeps } from '../deps.ts';

export const AI_QUERY_TYPES = ['company'] as const;

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

/** Runs one agent query. Throws InvalidInputError (400), NotFoundError (404) or SourceUnavailableError (503) like the REST API. */
export async function runAiQuery(deps: ServiceDeps, query: AiQuery): Promise<AiQueryResponse> {
  switch (query.type) {
    case 'company': {
      const company = await findCompany(readerFor(deps, 'registry'), query.q);
      return { schema: 'proofline/ai-query/v1', query, source: 'registry', results: [buildIdentityCard(company, deps.options.publicBaseUrl)] };
    }
  }
}
