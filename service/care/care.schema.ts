/**
 * Answer schemas of the proof-of-care routes (care.queries.ts CareDocument and CareEvent, care.chain.ts
 * VerifyResult): OpenAPI components of their bodies, checked against live answers by
 * test/api/openapi-conformance.test.ts. `shipment` and `parties` are stored as given (their required members
 * are those of createCareInput), `actor` and `evidence` likewise.
 */
import { z } from 'zod';
import { CARE_STAGES } from './care.chain.ts';

const sha256 = z.string().regex(/^[a-f0-9]{64}$/);
const party = z.union([
  z.string(),
  z.looseObject({ name: z.string().optional(), dot_number: z.union([z.string(), z.number()]).optional() }),
]);

const careDocument = z.object({
  document_id: z.string(),
  created_at: z.string(),
  shipment: z.looseObject({ ref: z.string(), commodity: z.string(), value_usd: z.number() }),
  parties: z.looseObject({ broker: party, carrier: party }),
  vetting_id: z.string().nullable(),
  vetting_data_hash: sha256.nullable(),
  creation_hash: sha256,
  event_count: z.number().int(),
  head_hash: sha256,
  last_stage: z.enum(CARE_STAGES).nullable(),
});

/** POST /api/care (201): the document with the links of its page, JSON export, events and verification. */
export const createCareAnswer = careDocument.extend({
  links: z.object({ self: z.string(), json: z.string(), events: z.string(), verify: z.string() }),
});

/** POST /api/care/{id}/event (201): the stored event with its hash, chained to the previous one. */
export const careEventAnswer = z.object({
  document_id: z.string(),
  seq: z.number().int(),
  stage: z.enum(CARE_STAGES),
  actor: z.union([z.string(), z.looseObject({ name: z.string() })]),
  evidence: z.record(z.string(), z.unknown()),
  occurred_at: z.string().nullable(),
  recorded_at: z.string(),
  prev_hash: sha256,
  hash: sha256,
});

export const careListAnswer = z.object({
  count: z.number().int(),
  limit: z.number().int(),
  limit_clamped: z.object({ requested: z.number(), max: z.number() }).optional(),
  documents: z.array(careDocument),
  next_cursor: z.string().nullable(),
  next: z.string().nullable(),
});

export const careVerifyAnswer = z.object({
  document_id: z.string(),
  valid: z.boolean(),
  events_verified: z.number().int(),
  head_hash: z.string(),
  problems: z.array(
    z.object({
      seq: z.number().int().nullable(),
      code: z.enum([
        'creation_hash_mismatch',
        'not_canonical',
        'hash_mismatch',
        'prev_hash_mismatch',
        'sequence_gap',
        'head_mismatch',
        'count_mismatch',
        'document_mismatch',
        'unknown_stage',
        'stage_order',
      ]),
      message: z.string(),
    }),
  ),
});
