/** Answer schemas of /api/verify/{leaf_hash} (leaf, parent chain, signed receipt) and /.well-known/proofline-keys.json: OpenAPI components of their bodies, checked live by test/api/openapi-conformance.test.ts. */
import { z } from 'zod';
import { originLeafSchema } from '../platform/answer-schemas.ts';

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

export const verifyAnswer = z.object({
  leaf_hash: z.string(),
  found: z.literal(true),
  domain: z.string(),
  table_name: z.string().nullable(),
  leaf: originLeafSchema,
  chain: z.object({ valid: z.boolean(), problem: z.string().nullable(), length: z.number(), leaves: z.array(originLeafSchema) }),
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
