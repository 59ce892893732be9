/**
 * Answer schemas of the AI discovery files and /ai/query (spec 002, ai-discovery 1.1.1): the manifest, knowledge,
 * feed, archive and page-manifest files are described by our own schemas of the standard (lib/discovery/
 * manifest.schema.ts, the ones the discovery agent checks conformance with; extra members are allowed, as the
 * standard lists many optional ones). Checked against live answers by test/api/openapi-conformance.test.ts.
 */
import { z } from 'zod';
import { knowledgeFileSchema, signatureBlockSchema } from '../../lib/discovery/manifest.schema.ts';
import { carrierSearchAnswer } from '../carriers/carriers.queries.ts';
import { identityCardAnswer } from '../company/company.queries.ts';
import { AI_QUERY_TYPES } from './ai-query.queries.ts';

export {
  archiveFileSchema as archiveAnswer,
  discoveryManifestSchema as manifestAnswer,
  feedFileSchema as feedAnswer,
  pageManifestSchema as pagesAnswer,
} from '../../lib/discovery/manifest.schema.ts';

/** /ai/knowledge.json: the standard's lenient knowledge file, with the members this instance always writes. */
export const knowledgeAnswer = knowledgeFileSchema.extend({
  specVersion: z.string(),
  schemaVersion: z.string(),
  generated: z.string(),
  organization: z.looseObject({ name: z.string(), domain: z.string() }),
  _signature: signatureBlockSchema,
});

/** /ai/query without parameters: the query contract (how to ask, what comes back), signed like every discovery file. */
const queryContract = z.looseObject({
  standard: z.string(),
  specVersion: z.string(),
  schemaVersion: z.string(),
  generated: z.string(),
  endpoint: z.string(),
  request: z.looseObject({ methods: z.array(z.string()), types: z.array(z.looseObject({ type: z.enum(AI_QUERY_TYPES) })) }),
  response: z.looseObject({ contentType: z.string() }),
  errors: z.record(z.string(), z.string()),
  _signature: signatureBlockSchema,
});

/** An /ai/query answer: identity cards (type=company) or carrier search rows (type=carrier). */
export const aiQueryAnswer = z.object({
  schema: z.literal('proofline/ai-query/v1'),
  query: z.object({ q: z.string(), type: z.enum(AI_QUERY_TYPES) }),
  source: z.enum(['registry', 'fmcsa']),
  results: z.union([z.array(identityCardAnswer), carrierSearchAnswer.shape.results]),
});

/** GET /ai/query: the contract without parameters, an answer with `q` or `type`. */
export const aiQueryGetAnswer = z.union([queryContract, aiQueryAnswer]);

/** /ai/schemas/ai-discovery-1.1.1.json: the JSON Schema (draft 2020-12) form of our manifest schema. */
export const manifestJsonSchemaAnswer = z.looseObject({
  $schema: z.string(),
  $id: z.string(),
  title: z.string(),
  type: z.literal('object'),
  properties: z.record(z.string(), z.unknown()),
  required: z.array(z.string()),
});
