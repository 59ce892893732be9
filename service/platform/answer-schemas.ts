/**
 * Answer-schema parts every family's OpenAPI response schemas share (docs/architecture.md#openapi-and-docs):
 * the origin leaf (docs/provenance.md#origin-leaves) and the page members of list answers (pagination.ts).
 */
import { z } from 'zod';

const sha256 = z.string().regex(/^[a-f0-9]{64}$/);

/** An origin leaf: the fixed key set, absent values null (lib/origin.ts). */
export const originLeafSchema = z.object({
  leaf_hash: sha256,
  alg: z.literal('sha256'),
  canon: z.literal('rfc8785'),
  kind: z.string(),
  source: z.string(),
  source_url: z.string().nullable(),
  retrieved_at: z.string().nullable(),
  content_sha256: sha256.nullable(),
  record_sha256: sha256.nullable(),
  parent: sha256.nullable(),
});

/** The members a page of a list route adds (pagination.ts). */
export const pageMembers = {
  next_cursor: z.string().nullable().describe('cursor of the next page; null on the last page'),
  next: z.string().nullable().describe('URL of the next page (also the Link rel="next" header); null on the last page'),
};

/** `limit_clamped` of a list answer whose `limit` was above its maximum (http.ts clampLimit); absent otherwise. */
export const limitClampedSchema = z.object({ requested: z.number(), max: z.number() }).optional();
