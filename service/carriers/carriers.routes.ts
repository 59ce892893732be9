/**
 * Carrier endpoints (FMCSA domain). Query parameters:
 *
 *   GET /api/carriers?name=&dot=&mc=&state=&limit=20&offset=0   search (at least one of name, dot, mc, state)
 *   GET /api/carrier/{dot}                                      identity, L&I authority and insurance
 *   GET /api/carrier/{dot}/snapshot                             risk snapshot: features, assessment, inputs
 *   GET /api/safety?dot=                                        seven BASICs with thresholds and flags
 *   GET /api/crashes?dot=  or  ?vin=                            crashes (one row per vehicle)
 *   GET /api/inspections?dot=                                   inspections, violations, units, OOS rates
 *   GET /api/enforcement?dot=                                   OOS orders, enforcement cases, revocations
 *   GET /api/red-flags?code=&state=&limit=50                    carriers with a red flag, highest score first
 *   GET /api/fmcsa/status                                       record counts and as-of dates per dataset
 *
 * A bad parameter is a 400 naming it; an unknown DOT a 404 `{error, dot}`.
 */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../deps.ts';
import { readerFor } from '../deps.ts';
import { parseQuery } from '../http.ts';
import {
  getCarrier, getCarrierSafety, getCrashes, getDatasetStatus, getEnforcement, getInspections, getRiskSnapshot, searchCarriers, searchRedFlags,
} from './carriers.queries.ts';

const dotQuery = z.object({ dot: z.string({ error: 'required' }).min(1, 'required') });
const searchQuery = z.object({
  name: z.string().optional(),
  dot: z.string().optional(),
  mc: z.string().optional(),
  state: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});
const crashQuery = z.object({ dot: z.string().optional(), vin: z.string().optional() });
const redFlagQuery = z.object({ code: z.string().optional(), state: z.string().optional(), limit: z.coerce.number().int().min(1).max(500).default(50) });

export function registerCarrierRoutes(app: H3, deps: ServiceDeps): void {
  const fmcsa = () => readerFor(deps, 'fmcsa');
  app.get('/api/carriers', (e) => searchCarriers(fmcsa(), parseQuery(e, searchQuery)));
  app.get('/api/carrier/:dot', (e) => getCarrier(fmcsa(), getRouterParam(e, 'dot') ?? ''));
  app.get('/api/carrier/:dot/snapshot', (e) => getRiskSnapshot(fmcsa(), getRouterParam(e, 'dot') ?? ''));
  app.get('/api/safety', (e) => getCarrierSafety(fmcsa(), parseQuery(e, dotQuery).dot));
  app.get('/api/crashes', (e) => getCrashes(fmcsa(), parseQuery(e, crashQuery)));
  app.get('/api/inspections', (e) => getInspections(fmcsa(), parseQuery(e, dotQuery).dot));
  app.get('/api/enforcement', (e) => getEnforcement(fmcsa(), parseQuery(e, dotQuery).dot));
  app.get('/api/red-flags', (e) => searchRedFlags(fmcsa(), parseQuery(e, redFlagQuery)));
  app.get('/api/fmcsa/status', () => getDatasetStatus(fmcsa()));
}
