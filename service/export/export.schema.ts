/** Answer schema of /api/export (the tables of the current snapshots, with rows and manifest SHA-256): the OpenAPI component of its body, checked live by test/api/openapi-conformance.test.ts. */
import { z } from 'zod';
import { EXPORT_FORMATS } from './export.queries.ts';

export const exportTablesAnswer = z.object({
  count: z.number().int(),
  tables: z.array(
    z.object({
      domain: z.string(),
      table: z.string(),
      snapshot_id: z.string(),
      rows: z.number().int(),
      sha256: z.string().regex(/^[a-f0-9]{64}$/),
      bytes: z.number().int(),
      formats: z.array(z.enum(EXPORT_FORMATS)),
      path: z.string(),
    }),
  ),
});
