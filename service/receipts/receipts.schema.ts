/** Answer schemas of /api/verify/{leaf_hash} (leaf, parent chain, signed receipt) and /.well-known/proofline-keys.json: OpenAPI components of their bodies, checked live by test/api/openapi-conformance.test.ts. */
import { z } from 'zod';

const receiptSchema = z.object({
  leaf_hash: z.string(),
  found: z.boolean(),
  verified_at: z.string(),
  nonce: z.string(),
  prev_nonce: z.string().nullable(),
  prev_receipt_hash: z.string().nullable(),
  key_id: z.string(),
  signature: z.string(),
});

const leafSchema = z.object({
  leaf_hash: z.string(),
  alg: z.literal('sha256'),
  canon: z.literal('rfc8785'),
  kind: z.string(),
  source: z.string(),
  source_url: z.string().nullable(),
  retrieved_at: z.string().nullable(),
  content_sha256: z.string().nullable(),
  record_sha256: z.string().nullable(),
  parent: z.string().nullable(),
});

export const verifyAnswer = z.object({
  leaf_hash: z.string(),
  found: z.literal(true),
  domain: z.string(),
  table_name: z.string().nullable(),
  leaf: leafSchema,
  chain: z.object({ valid: z.boolean(), problem: z.string().nullable(), length: z.number(), leaves: z.array(leafSchema) }),
  receipt: receiptSchema,
  receipt_hash: z.string(),
  how_to_verify: z.string(),
});

export const keysAnswer = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('OKP'),
      crv: z.literal('Ed25519'),
      x: z.string(),
      kid: z.string(),
      alg: z.literal('EdDSA'),
      use: z.literal('sig'),
    }),
  ),
});
