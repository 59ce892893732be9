/**
 * Registry layer routes: /api/company/{ticker}/profile, /timeline, /filings?form=,
 * /earnings, /people; /api/person/{name}; /api/signals. Thin: parse, call the
 * transport-free query, return JSON.
 */
import { getQuery, getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { readerFor } from '../platform/deps.ts';
import { limitParam, parseQuery } from '../platform/http.ts';
import { cursorParam, pagedResponse } from '../platform/pagination.ts';
import { describeRoute } from '../platform/route-registry.ts';
import {
  earningsAnswer,
  filingsAnswer,
  peopleAnswer,
  personAnswer,
  profileAnswer,
  signalsAnswer,
  timelineAnswer,
} from './registry-layers.schema.ts';
import {
  getCompanyEarnings,
  getCompanyFilings,
  getCompanyPeople,
  getCompanyProfile,
  getCompanyTimeline,
  getPerson,
  listSignals,
} from './registry-layers.queries.ts';

const filingsQuery = z.object({
  form: z.string().optional().describe('10-K, 10-Q or 8-K (amendments included); case-insensitive'),
  limit: limitParam(100, 1000),
  cursor: cursorParam,
});
const originsParam = z
  .enum(['hash', 'full'])
  .optional()
  .describe(
    'row provenance: hash (default) = origin_leaf per row, to look up at /api/verify/{origin_leaf}; full = the whole leaf per row in origin',
  );
const detailParam = z
  .enum(['default', 'full'])
  .optional()
  .describe(
    'full: every row with all its fields (evidence sentences, EDGAR URLs, filing metadata); default: the layer at its token budget',
  );
const profileQuery = z.object({ origins: originsParam, detail: detailParam });
const timelineQuery = z.object({ limit: limitParam(20, 200), cursor: cursorParam, origins: originsParam, detail: detailParam });
const signalsQuery = z.object({
  ticker: z.string().min(1).max(15).optional(),
  type: z.string().optional().describe('signal type (see the index without parameters)'),
  exchange: z.string().min(1).max(20).optional(),
  also: z.string().optional().describe('a second signal type: companies having both'),
  min_strength: z.coerce.number().int().min(1).max(3).optional(),
  limit: limitParam(50, 200),
  cursor: cursorParam,
});
const earningsQuery = z.object({
  limit: limitParam(12, 200).describe('confirmed dates a page, newest first: default 12, max 200 (larger values are clamped)'),
  cursor: cursorParam,
});
const peopleQuery = z.object({
  limit: limitParam(1000, 1000).describe('roles a page (executives, then board, then owners): default and max 1000'),
  cursor: cursorParam,
});
const tickerParam = { ticker: 'ticker or CIK' };

describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}/profile',
  family: 'company',
  summary: 'Layer 1 profile (about 800 tokens): people, products, partnerships, affiliations',
  params: tickerParam,
  query: profileQuery,
  response: profileAnswer,
  statuses: [400, 404, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}/timeline',
  family: 'company',
  summary:
    'Layer 2 timeline (about 2000 tokens): acquisitions, launches, leadership changes, financial milestones (pages: limit + cursor, next)',
  params: tickerParam,
  query: timelineQuery,
  response: timelineAnswer,
  statuses: [400, 404, 409, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}/filings',
  family: 'company',
  summary: 'Layer 3 filings: accession, form, dates, EDGAR URLs, extraction status (pages: limit + cursor, next)',
  params: tickerParam,
  query: filingsQuery,
  response: filingsAnswer,
  statuses: [400, 404, 409, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}/earnings',
  family: 'company',
  summary: 'Confirmed and predicted earnings dates, recent 8-Ks (confirmed dates page: limit + cursor, next)',
  params: tickerParam,
  query: earningsQuery,
  response: earningsAnswer,
  statuses: [400, 404, 409, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/company/{ticker}/people',
  family: 'company',
  summary: 'Executives, board members and owners (pages: limit + cursor, next)',
  params: tickerParam,
  query: peopleQuery,
  response: peopleAnswer,
  statuses: [400, 404, 409, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/person/{name}',
  family: 'company',
  summary: 'A person by case-insensitive partial name match, with career across companies',
  params: { name: 'person name (partial, case-insensitive)' },
  response: personAnswer,
  statuses: [404, 503],
});
describeRoute({
  method: 'GET',
  path: '/api/signals',
  family: 'company',
  summary:
    'Signals from 10-K risk factors and MD&A; no parameters at all: index of signal types with counts; any parameter (also limit alone): the matching signals, paged (limit + cursor, next)',
  query: signalsQuery,
  response: signalsAnswer,
  statuses: [400, 409, 503],
});

export function registerRegistryLayerRoutes(app: H3, deps: ServiceDeps): void {
  const reg = () => readerFor(deps, 'registry');
  const ticker = (e: Parameters<typeof getRouterParam>[0]) => getRouterParam(e, 'ticker') ?? '';
  app.get('/api/company/:ticker/profile', (e) => getCompanyProfile(reg(), ticker(e), parseQuery(e, profileQuery)));
  const base = () => deps.options.publicBaseUrl;
  app.get('/api/company/:ticker/timeline', async (e) =>
    pagedResponse(e, await getCompanyTimeline(reg(), ticker(e), parseQuery(e, timelineQuery)), base()),
  );
  app.get('/api/company/:ticker/filings', async (e) =>
    pagedResponse(e, await getCompanyFilings(reg(), ticker(e), parseQuery(e, filingsQuery)), base()),
  );
  app.get('/api/company/:ticker/earnings', async (e) =>
    pagedResponse(e, await getCompanyEarnings(reg(), ticker(e), parseQuery(e, earningsQuery)), base()),
  );
  app.get('/api/company/:ticker/people', async (e) =>
    pagedResponse(e, await getCompanyPeople(reg(), ticker(e), parseQuery(e, peopleQuery)), base()),
  );
  app.get('/api/person/:name', (e) => getPerson(reg(), getRouterParam(e, 'name') ?? ''));
  app.get('/api/signals', async (e) => {
    const answer = await listSignals(reg(), parseQuery(e, signalsQuery), Object.keys(getQuery(e)).length);
    // The index (no parameter at all) is one document; any parameter gives the matching signals, which page.
    return 'next_cursor' in answer ? pagedResponse(e, answer, base()) : answer;
  });
}
