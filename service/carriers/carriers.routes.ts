/**
 * Carrier endpoints (FMCSA domain). Query parameters:
 *
 *   GET /api/carriers?name=&dot=&mc=&state=&limit=20&cursor=    search (at least one of name, dot, mc, state)
 *   GET /api/carrier/{dot}                                      identity, L&I authority and insurance
 *   GET /api/carrier/{dot}/snapshot                             risk snapshot: features, assessment, inputs
 *   GET /api/safety?dot=                                        seven BASICs with thresholds and flags
 *   GET /api/crashes?dot=  or  ?vin=                            crashes (one row per vehicle)
 *   GET /api/inspections?dot=                                   inspections, violations, units, OOS rates
 *   GET /api/enforcement?dot=                                   OOS orders, enforcement cases, revocations
 *   GET /api/red-flags?code=&state=&limit=50&cursor=            carriers with a red flag, highest score first
 *   GET /api/fmcsa/status                                       record counts and as-of dates per dataset
 *
 * Both lists page with `limit` + `cursor`: `next` / `next_cursor` in the body, `Link: rel="next"` (platform/pagination.ts).
 * A bad parameter is a 400 naming it; an unknown DOT a 404 `{error, dot}`.
 */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { limitParam, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import {
  carrierAnswer,
  carrierSearchAnswer,
  crashesAnswer,
  datasetStatusAnswer,
  enforcementAnswer,
  inspectionsAnswer,
  redFlagAnswer,
  riskSnapshotAnswer,
  safetyAnswer,
} from './carriers.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import {
  getCarrier,
  getCarrierSafety,
  getCrashes,
  getDatasetStatus,
  getEnforcement,
  getInspections,
  getRiskSnapshot,
  searchCarriers,
  searchRedFlags,
} from './carriers.queries.ts';

const dotQuery = z.object({ dot: z.string({ error: 'required' }).min(1, 'required').describe('USDOT number') });
const searchQuery = z.object({
  name: z.string().optional().describe('legal or DBA name contains (at least 2 characters)'),
  dot: z.string().optional().describe('USDOT number'),
  mc: z.string().optional().describe('MC/MX/FF docket (MC123456)'),
  state: z.string().optional().describe('2-letter physical state'),
  limit: limitParam(20, 100),
  offset: z.coerce.number().int().min(0).default(0).describe('rows to skip (prefer cursor)'),
  cursor: cursorParam,
});
const crashQuery = z.object({
  dot: z.string().optional().describe('USDOT number'),
  vin: z.string().optional().describe('vehicle VIN'),
  limit: limitParam(500, 500).describe('newest crashes to list (counts cover all); max 500, larger values are clamped (limit_clamped)'),
  cursor: cursorParam,
});
const inspectionQuery = dotQuery.extend({
  limit: limitParam(100, 100),
  cursor: cursorParam,
});
const redFlagQuery = z.object({
  code: z.string().optional().describe('red-flag code (CAPS_SNAKE_CASE)'),
  state: z.string().optional().describe('2-letter physical state'),
  min_risk: z.string().optional().describe('minimum risk_score 0-100, or a level: LOW, MODERATE, HIGH, CRITICAL'),
  safety_rating: z.string().optional().describe('census safety rating: S, C or U'),
  limit: limitParam(50, 500),
  cursor: cursorParam,
});
const dotParam = { dot: 'USDOT number' };

describeRoute({
  method: 'GET',
  path: '/api/carriers',
  family: 'carriers',
  summary:
    'Carrier search (at least one filter): name contains, ranked exact > prefix > contains, then fleet size → {total, results, next}',
  query: searchQuery,
  response: carrierSearchAnswer,
  statuses: [400, 409, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/carrier/{dot}',
  family: 'carriers',
  summary: 'Carrier identity, L&I authority dockets and insurance filings',
  params: dotParam,
  statuses: [400, 404, 503],
  response: carrierAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/carrier/{dot}/snapshot',
  family: 'carriers',
  summary: 'Risk snapshot: features, assessment, inputs with dataset as-of dates and SHA-256',
  params: dotParam,
  response: riskSnapshotAnswer,
  statuses: [400, 404, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/safety',
  family: 'carriers',
  summary: 'The seven BASICs: measure, percentile, threshold, exceeded, alert',
  query: dotQuery,
  statuses: [400, 404, 503],
  response: safetyAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/crashes',
  family: 'carriers',
  summary:
    'Crashes (one row per vehicle) with fatal / injury / tow-away counts over every crash, by carrier or VIN, newest first (pages: limit + cursor, next)',
  query: crashQuery,
  statuses: [400, 404, 409, 503],
  response: crashesAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/inspections',
  family: 'carriers',
  summary:
    'Inspections, newest first, with their violations and units (pages: limit + cursor, next); 24-month OOS rates vs national averages',
  query: inspectionQuery,
  statuses: [400, 404, 409, 503],
  response: inspectionsAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/enforcement',
  family: 'carriers',
  summary: 'OOS orders, enforcement cases, revocations (data_available false when a dataset is empty)',
  query: dotQuery,
  statuses: [400, 404, 503],
  response: enforcementAnswer,
});
describeRoute({
  method: 'GET',
  path: '/api/red-flags',
  family: 'carriers',
  summary: 'Carriers with a red flag, highest score first → {total, results, next} (page with cursor)',
  query: redFlagQuery,
  response: redFlagAnswer,
  statuses: [400, 409, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/fmcsa/status',
  family: 'carriers',
  summary: 'Record counts and as-of dates per FMCSA dataset, files loaded (SHA-256), reject counts',
  statuses: [503],
  response: datasetStatusAnswer,
});

export function registerCarrierRoutes(app: H3, deps: ServiceDeps): void {
  const fmcsa = () => readerFor(deps, 'fmcsa');
  const base = () => deps.options.publicBaseUrl;
  app.get('/api/carriers', async (e) => pagedResponse(e, await searchCarriers(fmcsa(), parseQuery(e, searchQuery)), base()));
  app.get('/api/carrier/:dot', (e) => getCarrier(fmcsa(), getRouterParam(e, 'dot') ?? ''));
  app.get('/api/carrier/:dot/snapshot', (e) => getRiskSnapshot(fmcsa(), getRouterParam(e, 'dot') ?? ''));
  app.get('/api/safety', (e) => getCarrierSafety(fmcsa(), parseQuery(e, dotQuery).dot));
  app.get('/api/crashes', async (e) => pagedResponse(e, await getCrashes(fmcsa(), parseQuery(e, crashQuery)), base()));
  app.get('/api/inspections', async (e) => {
    const q = parseQuery(e, inspectionQuery);
    return pagedResponse(e, await getInspections(fmcsa(), q.dot, { limit: q.limit, cursor: q.cursor }), base());
  });
  app.get('/api/enforcement', (e) => getEnforcement(fmcsa(), parseQuery(e, dotQuery).dot));
  app.get('/api/red-flags', async (e) => pagedResponse(e, await searchRedFlags(fmcsa(), parseQuery(e, redFlagQuery)), base()));
  app.get('/api/fmcsa/status', () => getDatasetStatus(fmcsa()));
}
