/**
 * Answer schemas of /api/health and /api/ready (health.queries.ts Health and Readiness): OpenAPI components of their
 * bodies, checked against live answers by test/api/openapi-conformance.test.ts. /api/ready answers the same body
 * with 503 while not ready.
 */
import { z } from 'zod';

const dependencyStatus = z.enum(['up', 'down', 'slow']);

export const healthAnswer = z.object({
  status: z.enum(['healthy', 'degraded']),
  uptime_seconds: z.number(),
  timestamp: z.string(),
  version: z.string(),
  db: z.enum(['ok', 'stale', 'no_snapshot', 'none']).describe('spec 000 `db`: the worst state of the served domains'),
  db_detail: z.record(
    z.string(),
    z.object({
      snapshot_id: z.string().nullable(),
      published_at: z.string().nullable(),
      age_hours: z.number().nullable(),
      stale: z.boolean(),
    }),
  ),
  dependencies: z.record(z.string(), dependencyStatus),
  dependency_detail: z.record(
    z.string(),
    z.object({
      state: z.enum(['closed', 'open', 'half_open']).optional(),
      timeout_ms: z.number().optional(),
      consecutive_failures: z.number().int().optional(),
      last_failure: z.string().nullable().optional(),
      last_failure_at: z.string().nullable().optional(),
      last_latency_ms: z.number().nullable().optional(),
      probe_ms: z.number().optional(),
      counted_in_memory: z.number().int().optional(),
    }),
  ),
  state_backend: z.enum(['duckdb', 'postgres']).nullable(),
  query_log: z
    .object({
      backend: z.enum(['duckdb', 'postgres']),
      unsent_rows: z.number().int(),
      dropped_rows: z.number().int(),
      written_rows: z.number().int(),
      max_unsent_rows: z.number().int(),
    })
    .optional()
    .describe(
      'the query log behind rankings and stats: rows not yet written (kept while PostgreSQL is down), dropped at the bound (the newest), written',
    ),
  reasons: z.array(z.string()),
});

export const readinessAnswer = z.object({
  ready: z.boolean(),
  snapshots: z.record(z.string(), z.boolean()),
  state_store: z.enum(['up', 'down', 'slow', 'not_owned', 'not_configured']),
  reasons: z.array(z.string()),
});
