/**
 * Carrier monitoring (docs/monitoring.md): watchlists, change events between
 * published FMCSA snapshots, and signed webhooks. Every route runs as the
 * account of the request's API key, else the broker_id's free account.
 */
import { withMembers } from '../../lib/objects.ts';
import { getRouterParam, type H3, type H3Event } from 'h3';
import { z } from 'zod';
import { InvalidInputError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { creditKeyOf } from '../platform/guards.ts';
import { clampLimit, limitParam, parseBody, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { changeEventsAnswer, monitoringSettingsAnswer, watchAddAnswer, watchRemoveAnswer, watchlistAnswer } from './monitoring.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { listChangeEvents } from './changes.queries.ts';
import {
  addToWatchlist,
  brokerIdSchema,
  dotSchema,
  getMonitoringSettings,
  listWatchlist,
  removeFromWatchlist,
  resolveMonitoringAccount,
  setMonitoringSettings,
  settingsInput,
  watchInput,
  monitoringStateOf,
} from './watchlist.queries.ts';

const accountQuery = z.object({ broker_id: brokerIdSchema.optional() });
const pageQuery = accountQuery.extend({
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});

describeRoute({
  method: 'GET',
  path: '/api/watchlist',
  family: 'monitoring',
  summary: "The account's watched carriers (by DOT, cursor pages), each with its state in the served snapshot and its last change",
  query: pageQuery,
  statuses: [400, 503],
  response: watchlistAnswer,
});
describeRoute({
  method: 'POST',
  path: '/api/watchlist',
  family: 'monitoring',
  summary: 'Watch carriers by DOT number (free; the watchlist size is a plan limit: 402 beyond it)',
  body: watchInput,
  statuses: [400, 401, 402, 503],
  response: watchAddAnswer,
});
describeRoute({
  method: 'DELETE',
  path: '/api/watchlist/{dot}',
  family: 'monitoring',
  summary: 'Stop watching one carrier',
  params: { dot: 'USDOT number' },
  query: accountQuery,
  statuses: [400, 401, 503],
  response: watchRemoveAnswer,
});
const eventsQuery = pageQuery.extend({
  dot: z
    .string()
    .regex(/^\d{1,8}$/, 'must be a USDOT number')
    .optional()
    .describe('one watched carrier only'),
});
describeRoute({
  method: 'GET',
  path: '/api/monitoring/events',
  family: 'monitoring',
  summary:
    "Change events of the account's watched carriers between published FMCSA snapshots, oldest first (cursor pages): both snapshot ids, kinds, changed fields before/after, origin leaves of both rows",
  query: eventsQuery,
  statuses: [400, 503],
  response: changeEventsAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/monitoring/settings',
  family: 'monitoring',
  summary: "The account's plan, watchlist size and limit, and auto_watch",
  query: accountQuery,
  statuses: [400, 503],
  response: monitoringSettingsAnswer,
});
describeRoute({
  method: 'POST',
  path: '/api/monitoring/settings',
  family: 'monitoring',
  summary: 'Opt in or out of auto_watch: every carrier the account vets (POST /api/vet) joins its watchlist',
  body: settingsInput,
  statuses: [400, 401, 503],
  response: monitoringSettingsAnswer,
});

/** The account of a request: its API key's account, else broker_id from the body or query. */
export async function accountOf(deps: ServiceDeps, event: H3Event, brokerId?: string | null): Promise<string> {
  return resolveMonitoringAccount(monitoringStateOf(deps), { apiKey: creditKeyOf(event), brokerId });
}

export function registerMonitoringRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/watchlist', async (event) => {
    const q = parseQuery(event, pageQuery);
    const account = await accountOf(deps, event, q.broker_id);
    const { limit, clamped } = clampLimit(q.limit, 100, 1000);
    const page = await listWatchlist(monitoringStateOf(deps), deps.readers.fmcsa, account, limit, q.cursor);
    return pagedResponse(event, withMembers(page, clamped ? { limit_clamped: clamped } : {}), deps.options.publicBaseUrl);
  });

  app.post('/api/watchlist', async (event) => {
    const body = await parseBody(event, watchInput);
    const account = await accountOf(deps, event, body.broker_id);
    return addToWatchlist(monitoringStateOf(deps), account, body.dot_numbers, 'api', deps.now());
  });

  app.delete('/api/watchlist/:dot', async (event) => {
    const q = parseQuery(event, accountQuery);
    const dot = dotSchema.safeParse(getRouterParam(event, 'dot') ?? '');
    if (!dot.success)
      throw new InvalidInputError(`invalid parameter 'dot': ${dot.error.issues[0]?.message}`, { response: { parameter: 'dot' } });
    const account = await accountOf(deps, event, q.broker_id);
    return removeFromWatchlist(monitoringStateOf(deps), account, [dot.data]);
  });

  app.get('/api/monitoring/events', async (event) => {
    const q = parseQuery(event, eventsQuery);
    const account = await accountOf(deps, event, q.broker_id);
    const { limit, clamped } = clampLimit(q.limit, 100, 1000);
    const page = await listChangeEvents(monitoringStateOf(deps), account, {
      limit,
      cursor: q.cursor,
      dot: q.dot ? Number(q.dot) : undefined,
    });
    return pagedResponse(event, withMembers(page, clamped ? { limit_clamped: clamped } : {}), deps.options.publicBaseUrl);
  });

  app.get('/api/monitoring/settings', async (event) => {
    const q = parseQuery(event, accountQuery);
    return getMonitoringSettings(monitoringStateOf(deps), await accountOf(deps, event, q.broker_id));
  });

  app.post('/api/monitoring/settings', async (event) => {
    const body = await parseBody(event, settingsInput);
    const account = await accountOf(deps, event, body.broker_id);
    return setMonitoringSettings(monitoringStateOf(deps), account, body.auto_watch, deps.now());
  });
}
