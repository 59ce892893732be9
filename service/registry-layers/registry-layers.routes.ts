/**
 * Registry layer routes: /api/company/{ticker}/profile, /timeline, /filings?form=,
 * /earnings, /people; /api/person/{name}; /api/signals. Thin: parse, call the
 * transport-free query, return JSON.
 */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../deps.ts';
import { readerFor } from '../deps.ts';
import { parseQuery } from '../http.ts';
import { getCompanyEarnings, getCompanyFilings, getCompanyPeople, getCompanyProfile, getCompanyTimeline, getPerson, listSignals } from './registry-layers.queries.ts';

const limitParam = z.coerce.number().int().min(1).optional();
const filingsQuery = z.object({ form: z.string().optional(), limit: limitParam });
const timelineQuery = z.object({ limit: limitParam });
const signalsQuery = z.object({
  ticker: z.string().min(1).max(15).optional(),
  type: z.string().optional(),
  exchange: z.string().min(1).max(20).optional(),
  also: z.string().optional(),
  min_strength: z.coerce.number().int().min(1).max(3).optional(),
  limit: limitParam,
});

export function registerRegistryLayerRoutes(app: H3, deps: ServiceDeps): void {
  const reg = () => readerFor(deps, 'registry');
  const ticker = (e: Parameters<typeof getRouterParam>[0]) => getRouterParam(e, 'ticker') ?? '';
  app.get('/api/company/:ticker/profile', (e) => getCompanyProfile(reg(), ticker(e)));
  app.get('/api/company/:ticker/timeline', (e) => getCompanyTimeline(reg(), ticker(e), parseQuery(e, timelineQuery)));
  app.get('/api/company/:ticker/filings', (e) => getCompanyFilings(reg(), ticker(e), parseQuery(e, filingsQuery)));
  app.get('/api/company/:ticker/earnings', (e) => getCompanyEarnings(reg(), ticker(e)));
  app.get('/api/company/:ticker/people', (e) => getCompanyPeople(reg(), ticker(e)));
  app.get('/api/person/:name', (e) => getPerson(reg(), getRouterParam(e, 'name') ?? ''));
  app.get('/api/signals', (e) => listSignals(reg(), parseQuery(e, signalsQuery)));
}
