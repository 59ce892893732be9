/**
 * Answer schema of /openapi.json itself: an OpenAPI 3.1 document (its full shape is the OpenAPI specification's;
 * `redocly lint` checks it, test/api/openapi-conformance.test.ts). Named members are the ones this service writes.
 */
import { z } from 'zod';

export const openApiDocumentAnswer = z.looseObject({
  openapi: z.literal('3.1.0'),
  info: z.looseObject({ title: z.string(), version: z.string(), description: z.string(), license: z.looseObject({ name: z.string() }) }),
  servers: z.array(z.object({ url: z.string() })),
  tags: z.array(z.object({ name: z.string(), description: z.string() })),
  paths: z.record(
    z.string(),
    z.record(z.string(), z.looseObject({ operationId: z.string(), responses: z.record(z.string(), z.unknown()) })),
  ),
  components: z.looseObject({ schemas: z.record(z.string(), z.unknown()), securitySchemes: z.record(z.string(), z.unknown()) }),
});
