/**
 * POST /api/vet, POST /api/vet-preview, GET /api/vetting, POST /api/batch-vet.
 * Credits: a vetting record costs one credit (402 when the balance is short);
 * previews and history lookups are free.
 */
import { withMembers } from '../../lib/objects.ts';
import type { H3 } from 'h3';
import { z } from 'zod';
import { InvalidInputError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { clampLimit, limitParam, parseBody, parseQuery } from '../platform/http.ts';
import { BATCH_BODY_LIMIT } from '../platform/body.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { batchVetAnswer, plansAnswer, vetAnswer, vetPreviewAnswer, vettingLookupAnswer } from './vetting.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import {
  batchVet,
  batchVetInput,
  createVetting,
  vettingDepsOf,
  getVettingHistory,
  getVettingRecord,
  listPlans,
  previewInput,
  previewVetting,
  vetInput,
} from './vetting.queries.ts';
import { creditKeyOf, stateOf } from '../platform/guards.ts';
import { autoWatchVetted } from '../monitoring/watchlist.queries.ts';

const vettingQuery = z.object({
  dot: z
    .string()
    .regex(/^\d{1,8}$/, 'must be a USDOT number')
    .refine((d) => Number(d) > 0, 'must be a positive USDOT number')
    .optional()
    .describe("USDOT number: the carrier's vetting history"),
  id: z
    .string()
    .regex(/^VET-[A-Za-z0-9-]+$/, 'must be a VET-... id')
    .optional()
    .describe('one vetting record, with its snapshot_json'),
  limit: limitParam(50, 500),
  cursor: cursorParam,
});

describeRoute({
  method: 'POST',
  path: '/api/vet',
  family: 'vetting',
  summary: 'Vet a carrier: a signed, reproducible vetting record (1 credit)',
  body: vetInput,
  statuses: [400, 401, 402, 404, 503],
  description:
    'dot_number may be a number or a string of digits. Authorization: Bearer plc_... selects a paid credit account; without it the broker_id free account (30 credits) pays.',
  response: vetAnswer,
});
describeRoute({
  method: 'POST',
  path: '/api/vet-preview',
  family: 'vetting',
  summary: 'Same computation as /api/vet; no record stored, no credit used',
  body: previewInput,
  statuses: [400, 404, 503],
  response: vetPreviewAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/vetting',
  family: 'vetting',
  summary: "A carrier's vetting history (?dot=) or one record with snapshot_json (?id=)",
  query: vettingQuery,
  statuses: [400, 404],
  response: vettingLookupAnswer,
});
describeRoute({
  method: 'POST',
  path: '/api/batch-vet',
  family: 'vetting',
  summary: 'Vet many carriers: per-plan batch limit, whole batch checked against the balance first, per-DOT results',
  body: batchVetInput,
  statuses: [400, 401, 402, 503],
  response: batchVetAnswer,
});

describeRoute({
  method: 'GET',
  path: '/api/plans',
  family: 'vetting',
  summary: 'Vetting plans and prices: Free, pay as you go, 100-pack, 500-pack, Enterprise (credits, purchase sizes, batch limits)',
  response: plansAnswer,
});

export function registerVettingRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/plans', () => listPlans());

  app.post('/api/vet', async (event) => {
    const body = await parseBody(event, vetInput);
    const vd = await vettingDepsOf(deps);
    const { record, credits } = await createVetting(vd, body.dot_number, { brokerId: body.broker_id, apiKey: creditKeyOf(event) });
    // Monitoring opt-in (docs/monitoring.md): the vetted carrier joins the account's watchlist; the field appears only then.
    const watched = await autoWatchVetted(stateOf(deps), credits.account_id, record.dot_number, deps.now());
    return { ...record, credits, ...(watched ? { watchlist: { added: true } } : {}) };
  });

  app.post('/api/vet-preview', async (event) => {
    const body = await parseBody(event, previewInput);
    return previewVetting(await vettingDepsOf(deps), body.dot_number);
  });

  app.get('/api/vetting', async (event) => {
    const q = parseQuery(event, vettingQuery);
    const store = stateOf(deps);
    if (q.id) return getVettingRecord(store, q.id);
    if (q.dot) {
      const { limit, clamped } = clampLimit(q.limit, 50, 500);
      const history = await getVettingHistory(store, Number(q.dot), limit, q.cursor);
      return pagedResponse(
        event,
        withMembers(history, { limit, ...(clamped ? { limit_clamped: clamped } : {}) }),
        deps.options.publicBaseUrl,
      );
    }
    throw new InvalidInputError("give either 'dot' (history) or 'id' (one record)", { response: { parameter: 'dot' } });
  });

  app.post('/api/batch-vet', async (event) => {
    const body = await parseBody(event, batchVetInput, { limitBytes: BATCH_BODY_LIMIT });
    const vd = await vettingDepsOf(deps);
    return batchVet(vd, body.dot_numbers, { brokerId: body.broker_id, apiKey: creditKeyOf(event) });
  });
}
