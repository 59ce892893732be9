/**
 * Webhook endpoints, deliveries and their attempts (docs/monitoring.md).
 * The same handlers serve two trees: /api/webhooks for an account (its API
 * key, else broker_id) with the event types carrier.changed and care.event,
 * and /admin/webhooks for the operator (Bearer ADMIN_TOKEN) with every event
 * type, run.published and run.failed included.
 */
import { withMembers } from '../../lib/objects.ts';
import { monitoringStateOf } from './watchlist.queries.ts';
import { getRouterParam, type H3, type H3Event, HTTPError } from 'h3';
import { z } from 'zod';
import { InvalidInputError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { bearerTokenOf, tokensEqual } from '../platform/guards.ts';
import { clampLimit, limitParam, parseBody, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { describeRoute } from '../platform/route-registry.ts';
import {
  createEndpointAnswer,
  deleteEndpointAnswer,
  deliveriesAnswer,
  deliveryAnswer,
  endpointAnswer,
  endpointsAnswer,
  redeliverAnswer,
} from './monitoring.schema.ts';
import {
  createEndpoint,
  deleteEndpoint,
  enableEndpoint,
  endpointInput,
  getDelivery,
  listDeliveries,
  listEndpoints,
  OPERATOR_ACCOUNT,
  OPERATOR_EVENT_TYPES,
  redeliver,
} from './webhooks.queries.ts';
import { accountOf } from './monitoring.routes.ts';

const accountQuery = z.object({ broker_id: z.string().max(64).optional() });
/** PATCH …/{id}: the one change an endpoint takes, back to `active` (an endpoint is disabled by failures, not by hand). */
const endpointPatchInput = z.strictObject({
  status: z.literal('active').describe('active: re-enable an endpoint disabled after repeated failures (failure count reset)'),
});
const endpointsQuery = accountQuery.extend({ limit: limitParam(100, 1000), cursor: cursorParam });
const deliveriesQuery = accountQuery.extend({
  endpoint_id: z.string().max(64).optional(),
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: limitParam(50, 500),
  cursor: cursorParam,
});

for (const [base, who] of [
  ['/api/webhooks', "the account's"],
  ['/admin/webhooks', "the operator's (Bearer ADMIN_TOKEN)"],
] as const) {
  const family = 'monitoring';
  const statuses = base === '/admin/webhooks' ? [400, 401, 404, 503] : [400, 401, 404, 503];
  describeRoute({
    method: 'GET',
    path: base,
    family,
    summary: `${who} webhook endpoints, oldest first (secrets are not listed; pages: limit + cursor, next)`,
    query: endpointsQuery,
    response: endpointsAnswer,
    statuses,
  });
  describeRoute({
    method: 'POST',
    path: base,
    family,
    summary: `Register a webhook endpoint for ${who} events; the answer carries its whsec_ secret (shown once). Private and loopback URLs are refused`,
    body: endpointInput,
    response: createEndpointAnswer,
    statuses,
  });
  describeRoute({
    method: 'DELETE',
    path: `${base}/{id}`,
    family,
    summary: 'Remove an endpoint',
    params: { id: 'WHE-... endpoint id' },
    query: accountQuery,
    response: deleteEndpointAnswer,
    statuses,
  });
  describeRoute({
    method: 'PATCH',
    path: `${base}/{id}`,
    family,
    summary:
      'Re-enable an endpoint disabled after repeated failures: {"status":"active"} (POST …/{id}/enable, its former path, is still served as a deprecated alias)',
    params: { id: 'WHE-... endpoint id' },
    query: accountQuery,
    body: endpointPatchInput,
    response: endpointAnswer,
    statuses,
  });
  describeRoute({
    method: 'GET',
    path: `${base}/deliveries`,
    family,
    summary: `${who} deliveries, newest first (cursor pages)`,
    query: deliveriesQuery,
    response: deliveriesAnswer,
    statuses,
  });
  describeRoute({
    method: 'GET',
    path: `${base}/deliveries/{id}`,
    family,
    summary: 'One delivery: payload and every attempt (status, latency, error)',
    params: { id: 'WHD-... delivery id' },
    query: accountQuery,
    response: deliveryAnswer,
    statuses,
  });
  describeRoute({
    method: 'POST',
    path: `${base}/deliveries/{id}/redeliver`,
    family,
    summary: 'Send a delivery again by hand (same webhook-id)',
    params: { id: 'WHD-... delivery id' },
    query: accountQuery,
    response: redeliverAnswer,
    statuses,
  });
}

function idParam(event: H3Event, prefix: string): string {
  const id = getRouterParam(event, 'id') ?? '';
  if (!new RegExp(`^${prefix}-[0-9a-f]{16,24}$`).test(id))
    throw new InvalidInputError(`invalid parameter 'id': must be a ${prefix}-... id`, { response: { parameter: 'id' } });
  return id;
}

export function registerWebhookRoutes(app: H3, deps: ServiceDeps): void {
  const operator = async (event: H3Event) => {
    const token = deps.options.adminToken;
    if (!token) throw new HTTPError({ status: 404, message: 'admin endpoints are disabled (ADMIN_TOKEN is not set)' });
    if (!tokensEqual(bearerTokenOf(event.req.headers.get('authorization')), token))
      throw new HTTPError({ status: 401, message: 'admin token required: Authorization: Bearer <ADMIN_TOKEN>' });
    return OPERATOR_ACCOUNT;
  };
  const trees: Array<[string, (e: H3Event, brokerId?: string) => Promise<string>, boolean]> = [
    ['/api/webhooks', (e, b) => accountOf(deps, e, b), false],
    ['/admin/webhooks', (e) => operator(e), true],
  ];
  const webhookOpts = () => ({ privateOrigins: deps.options.webhookPrivateOrigins });
  for (const [base, account, isOperator] of trees) {
    app.get(base, async (e) => {
      const q = parseQuery(e, endpointsQuery);
      const { limit, clamped } = clampLimit(q.limit, 100, 1000);
      const page = await listEndpoints(monitoringStateOf(deps), await account(e, q.broker_id), { limit, cursor: q.cursor });
      return pagedResponse(e, withMembers(page, clamped ? { limit_clamped: clamped } : {}), deps.options.publicBaseUrl);
    });
    app.post(base, async (e) => {
      const body = await parseBody(e, endpointInput);
      const id = await account(e, body.broker_id);
      if (!isOperator && body.event_types.some((t) => OPERATOR_EVENT_TYPES.includes(t)))
        throw new InvalidInputError(
          `invalid field 'event_types': ${OPERATOR_EVENT_TYPES.join(' and ')} are operator events: register them at /admin/webhooks`,
          {
            response: { parameter: 'event_types' },
          },
        );
      return createEndpoint(monitoringStateOf(deps), id, body, deps.now(), webhookOpts());
    });
    app.delete(`${base}/:id`, async (e) =>
      deleteEndpoint(monitoringStateOf(deps), await account(e, parseQuery(e, accountQuery).broker_id), idParam(e, 'WHE')),
    );
    app.patch(`${base}/:id`, async (e) => {
      await parseBody(e, endpointPatchInput);
      return enableEndpoint(
        monitoringStateOf(deps),
        await account(e, parseQuery(e, accountQuery).broker_id),
        idParam(e, 'WHE'),
        deps.now(),
      );
    });
    // Deprecated alias (not described: known-routes.ts UNDOCUMENTED).
    app.post(`${base}/:id/enable`, async (e) =>
      enableEndpoint(monitoringStateOf(deps), await account(e, parseQuery(e, accountQuery).broker_id), idParam(e, 'WHE'), deps.now()),
    );
    app.get(`${base}/deliveries`, async (e) => {
      const q = parseQuery(e, deliveriesQuery);
      const { limit, clamped } = clampLimit(q.limit, 50, 500);
      const page = await listDeliveries(monitoringStateOf(deps), await account(e, q.broker_id), withMembers(q, { limit }));
      return pagedResponse(e, withMembers(page, clamped ? { limit_clamped: clamped } : {}), deps.options.publicBaseUrl);
    });
    app.get(`${base}/deliveries/:id`, async (e) =>
      getDelivery(monitoringStateOf(deps), await account(e, parseQuery(e, accountQuery).broker_id), idParam(e, 'WHD')),
    );
    app.post(`${base}/deliveries/:id/redeliver`, async (e) =>
      redeliver(
        monitoringStateOf(deps),
        deps.monitoringJobs,
        await account(e, parseQuery(e, accountQuery).broker_id),
        idParam(e, 'WHD'),
        deps.now(),
      ),
    );
  }
}
