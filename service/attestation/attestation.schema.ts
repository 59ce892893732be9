/**
 * Answer schemas of /api/status and /api/attestation (attestation.queries.ts StatusReport and Attestation): OpenAPI
 * components of their bodies, checked against live answers by test/api/openapi-conformance.test.ts.
 */
import { z } from 'zod';
import { datasetStatusAnswer } from '../carriers/carriers.queries.ts';

const strN = z.string().nullable();
const sha256 = z.string().regex(/^[a-f0-9]{64}$/);

export const statusAnswer = z.object({
  status: z.enum(['ok', 'no_data']),
  generated_at: z.string(),
  database_version: z.object({
    duckdb: strN,
    service: z.string(),
    fmcsa_snapshot_id: strN,
    fmcsa_published_at: strN,
    risk_model: strN,
  }),
  datasets: datasetStatusAnswer.nullable().describe('GET /api/fmcsa/status; null without an fmcsa snapshot'),
  tables: z.array(z.object({ domain: z.string(), table: z.string(), rows: z.number().int() })),
  domains: z.array(z.object({ domain: z.string(), snapshot_id: strN, published_at: strN })),
  state: z
    .object({
      vetting_records: z.number().int(),
      care_documents: z.number().int(),
      care_events: z.number().int(),
      accounts: z.number().int(),
    })
    .nullable(),
});

export const attestationAnswer = z.object({
  domain: z.literal('fmcsa'),
  snapshot_id: z.string(),
  published_at: z.string(),
  input_digest: strN,
  root_hash: sha256,
  root_algorithm: z.string(),
  tables: z.array(z.object({ table: z.string(), sha256, rows: z.number().int(), bytes: z.number().int() })),
  provenance: z.array(
    z.object({
      dataset: z.string(),
      path: strN,
      source_url: strN,
      content_sha256: sha256,
      byte_size: z.number().int(),
      retrieved_at: strN,
      run_id: z.string(),
      leaf_hash: sha256,
      tables: z.array(z.string()),
    }),
  ),
  signature: z.object({ alg: z.literal('Ed25519'), key_id: z.string(), value: z.string() }).nullable(),
});
