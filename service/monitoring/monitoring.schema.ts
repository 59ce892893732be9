/**
 * Answer schemas of the monitoring routes (watchlist, change events, settings: watchlist.queries.ts and
 * changes.queries.ts) and of the webhook routes under /api/webhooks and /admin/webhooks (webhooks.queries.ts):
 * OpenAPI components of their bodies, checked against live answers by test/api/openapi-conformance.test.ts.
 */
import { z } from 'zod';
import { originLeafSchema } from '../platform/answer-schemas.ts';
import { EVENT_TYPES } from './webhooks.queries.ts';

const str = z.string();
const strN = z.string().nullable();
const int = z.number().int();
const dot = z.number().int();
const page = { limit: int, limit_clamped: z.object({ requested: z.number(), max: z.number() }).optional(), next_cursor: strN, next: strN };
const riskLevel = z.enum(['LOW', 'MODERATE', 'HIGH', 'CRITICAL']);
const recommendation = z.enum(['APPROVE', 'CAUTION', 'REJECT']);

const settings = { account_id: str, plan: str, auto_watch: z.boolean(), watched: int, watchlist_limit: int };
export const monitoringSettingsAnswer = z.object(settings);

export const watchlistAnswer = z.object({
  ...settings,
  ...page,
  carriers: z.array(
    z.object({
      dot_number: dot,
      added_at: str,
      added_by: str.describe('api, mcp or auto_vet (POST /api/vet with auto_watch)'),
      state: z
        .object({
          snapshot_id: str,
          as_of: strN,
          legal_name: strN,
          authority_status: strN,
          oos_orders_active: z.number().nullable(),
          risk_score: z.number(),
          risk_level: riskLevel,
          recommendation,
          red_flags: z.array(str),
          origin: originLeafSchema.nullable().optional(),
        })
        .nullable()
        .describe('its row in the served FMCSA snapshot; null when the snapshot lacks it'),
      last_change: z.object({ event_id: str, kinds: z.array(str), snapshot_id: str, detected_at: str }).nullable(),
    }),
  ),
});

export const watchAddAnswer = z.object({ account_id: str, added: z.array(dot), already_watched: z.array(dot), watched: int, limit: int });
export const watchRemoveAnswer = z.object({ account_id: str, removed: z.array(dot), not_watched: z.array(dot) });

export const changeEventsAnswer = z.object({
  account_id: str,
  ...page,
  events: z.array(
    z.object({
      event_id: str,
      dot_number: dot,
      prev_snapshot_id: str,
      next_snapshot_id: str,
      kinds: z.array(str),
      changes: z.array(z.object({ field: str, before: z.unknown(), after: z.unknown() })),
      origin: z.object({ prev: originLeafSchema, next: originLeafSchema }),
      detected_at: str,
    }),
  ),
});

const endpointStatus = z.enum(['active', 'disabled']);
const endpoint = z.object({
  endpoint_id: str,
  account_id: str,
  url: str,
  event_types: z.array(z.enum(EVENT_TYPES)),
  status: endpointStatus,
  disabled_reason: strN,
  consecutive_failures: int,
  created_at: str,
  updated_at: str,
});
export const endpointAnswer = endpoint;
/** POST: the new endpoint with its signing secret (whsec_..., shown only here). */
export const createEndpointAnswer = z.object({
  endpoint_id: str,
  account_id: str,
  url: str,
  event_types: z.array(z.enum(EVENT_TYPES)),
  status: endpointStatus,
  secret: z.string().startsWith('whsec_'),
  created_at: str,
});
export const endpointsAnswer = z.object({ account_id: str, endpoints: z.array(endpoint), ...page });
export const deleteEndpointAnswer = z.object({ endpoint_id: str, deleted: z.boolean() });

const delivery = {
  delivery_id: str,
  message_id: str,
  endpoint_id: str,
  event_type: z.enum(EVENT_TYPES),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: int,
  last_error: strN,
  created_at: str,
  updated_at: str,
};
export const deliveriesAnswer = z.object({ account_id: str, ...page, deliveries: z.array(z.object(delivery)) });
export const deliveryAnswer = z.object({
  ...delivery,
  payload: z.object({ type: z.enum(EVENT_TYPES), timestamp: str, data: z.record(z.string(), z.unknown()) }),
  attempt_log: z.array(z.object({ attempt: int, started_at: str, status_code: int.nullable(), latency_ms: z.number(), error: strN })),
});
export const redeliverAnswer = z.object({ delivery_id: str, status: z.literal('pending'), enqueued: z.boolean() });
