/**
 * Makes /openapi.json list every route the app really serves: for each
 * registered h3 route without a description, a description from KNOWN (for
 * families that did not call describeRoute) or, failing that, a minimal one
 * derived from the path. Routes that are described but not served are left
 * out of nothing (families describe what they register).
 */
import type { H3 } from 'h3';
import { z } from 'zod';
import { describeRouteIfAbsent, listRoutes, type HttpMethod, type RouteDoc } from './route-registry.ts';

const limitQuery = (def: number, max: number) => z.coerce.number().int().min(1).optional().describe(`default ${def}, max ${max} (larger values are clamped)`);

/** Descriptions of routes owned by other families, used only when they did not describe themselves. */
const KNOWN: Array<Omit<RouteDoc, 'method'> & { method?: HttpMethod }> = [
  { path: '/api/health', family: 'health', summary: 'Service health: healthy or degraded (with reasons: stale snapshot, Redis down), uptime, snapshot ages', responseDescription: '{status, uptime_seconds, timestamp, version, db, dependencies, reasons}' },
  { path: '/api/company/{ticker}', family: 'company', summary: 'Layer 0 identity card (about 200 tokens); a CIK is accepted too', params: { ticker: 'ticker (AAPL, BRK-B) or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/profile', family: 'company', summary: 'Layer 1 profile (about 800 tokens): people, products, partnerships, affiliations', params: { ticker: 'ticker or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/timeline', family: 'company', summary: 'Layer 2 timeline (about 2000 tokens): acquisitions, launches, leadership changes, financial milestones', params: { ticker: 'ticker or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/filings', family: 'company', summary: 'Layer 3 filings: accession, form, dates, EDGAR URLs, extraction status', params: { ticker: 'ticker or CIK' }, query: z.object({ form: z.enum(['10-K', '10-Q', '8-K']).optional() }), statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/earnings', family: 'company', summary: 'Confirmed and predicted earnings dates, recent 8-Ks', params: { ticker: 'ticker or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/people', family: 'company', summary: 'Executives and board members', params: { ticker: 'ticker or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/person/{name}', family: 'company', summary: 'A person by case-insensitive partial name match, with career across companies', params: { name: 'person name (partial, case-insensitive)' }, statuses: [404, 503] },
  { path: '/api/signals', family: 'company', summary: 'Signals from 10-K risk factors and MD&A; no parameters: index of signal types with counts', query: z.object({ ticker: z.string().optional(), type: z.string().optional(), exchange: z.string().optional(), also: z.string().optional(), min_strength: z.coerce.number().optional(), limit: limitQuery(50, 200) }), statuses: [400, 503] },
  { path: '/api/company/{ticker}/quote', family: 'quotes', summary: 'Latest daily bar with market context and origin', params: { ticker: 'ticker or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/quote/history', family: 'quotes', summary: 'Daily quotes, each with its chained origin leaf', params: { ticker: 'ticker or CIK' }, query: z.object({ limit: limitQuery(30, 365), from: z.string().optional().describe('YYYY-MM-DD') }), statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/transcripts', family: 'transcripts', summary: 'Earnings-call transcripts: count, titles, quarters, speakers, key metrics', params: { ticker: 'ticker or CIK' }, statuses: [400, 404, 503] },
  { path: '/api/company/{ticker}/facts', family: 'transcripts', summary: 'Facts extracted from transcripts', params: { ticker: 'ticker or CIK' }, query: z.object({ type: z.string().optional(), topic: z.string().optional() }), statuses: [400, 404, 503] },
  { path: '/api/carriers', family: 'carriers', summary: 'Carrier search (at least one filter): name contains, ranked exact > prefix > contains, then fleet size → {total, results}', query: z.object({ name: z.string().optional(), dot: z.string().optional(), mc: z.string().optional(), state: z.string().optional(), limit: limitQuery(20, 100), offset: z.coerce.number().int().min(0).optional() }), statuses: [400, 503] },
  { path: '/api/carrier/{dot}', family: 'carriers', summary: 'Carrier identity, L&I authority dockets and insurance filings', params: { dot: 'USDOT number' }, statuses: [400, 404, 503] },
  { path: '/api/carrier/{dot}/snapshot', family: 'carriers', summary: 'Risk snapshot: features, assessment, inputs with dataset as-of dates and SHA-256', params: { dot: 'USDOT number' }, statuses: [400, 404, 503] },
  { path: '/api/safety', family: 'carriers', summary: 'The seven BASICs: measure, percentile, threshold, exceeded, alert', query: z.object({ dot: z.string() }), statuses: [400, 404, 503] },
  { path: '/api/crashes', family: 'carriers', summary: 'Crashes (one row per vehicle) with fatal / injury / tow-away counts, by carrier or VIN', query: z.object({ dot: z.string().optional(), vin: z.string().optional() }), statuses: [400, 404, 503] },
  { path: '/api/inspections', family: 'carriers', summary: 'Newest 100 inspections with violations and units; 24-month OOS rates vs national averages', query: z.object({ dot: z.string() }), statuses: [400, 404, 503] },
  { path: '/api/enforcement', family: 'carriers', summary: 'OOS orders, enforcement cases, revocations (data_available false when a dataset is empty)', query: z.object({ dot: z.string() }), statuses: [400, 404, 503] },
  { path: '/api/red-flags', family: 'carriers', summary: 'Carriers with a red flag, highest score first', query: z.object({ code: z.string().optional(), state: z.string().optional(), limit: limitQuery(50, 500) }), statuses: [400, 503] },
  { path: '/api/fmcsa/status', family: 'carriers', summary: 'Record counts and as-of dates per FMCSA dataset, files loaded (SHA-256), reject counts', statuses: [503] },
  { path: '/.well-known/ai', family: 'discovery', metered: false, summary: 'AI Discovery manifest of this instance (signed: _signature)' },
  { path: '/.well-known/archive', family: 'discovery', metered: false, summary: 'Archive of superseded discovery documents' },
  { path: '/ai/knowledge.json', family: 'discovery', metered: false, summary: 'Discovery knowledge: summary, glossary, products, technology' },
  { path: '/ai/feed.json', family: 'discovery', metered: false, summary: 'Discovery feed' },
  { path: '/ai/pages.json', family: 'discovery', metered: false, summary: 'Discovery page manifest with page hashes' },
  { path: '/ai/query', family: 'discovery', metered: false, summary: 'Discovery query contract' },
  { path: '/ai/query', method: 'POST', family: 'discovery', metered: false, summary: 'Discovery query endpoint' },
  { path: '/llms.txt', family: 'discovery', metered: false, summary: 'llms.txt summary of this service', contentType: 'text/plain' },
  { path: '/', family: 'discovery', metered: false, summary: 'Home page (HTML)', contentType: 'text/html' },
  { path: '/mcp', family: 'mcp', metered: false, summary: 'MCP endpoint (Streamable HTTP): GET is not used in stateless mode' },
  { path: '/api/search/transcripts', family: 'transcripts', summary: 'Search transcript facts by topic and type; first=true: first-mention date per company', query: z.object({ topic: z.string().optional(), type: z.string().optional(), first: z.enum(['true', 'false']).optional() }), statuses: [400, 503] },
];

function isSeeded(method: string, path: string): boolean {
  return listRoutes().some((r) => r.method === method && r.path === path);
}

/** Adds descriptions for every route `app` serves that has none. Idempotent. */
export function seedRoutesOf(app: H3): void {
  const served = (app as unknown as { '~routes': Array<{ method: string; route: string }> })['~routes'] ?? [];
  for (const r of served) {
    const method = (r.method || 'GET').toUpperCase() as HttpMethod;
    if (!['GET', 'POST', 'PUT', 'DELETE'].includes(method)) continue;
    const path = r.route.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*\*:?([A-Za-z0-9_]*)/g, (_m, n: string) => `{${n || 'path'}}`);
    if (isSeeded(method, path)) continue;
    const known = KNOWN.find((k) => k.path === path && (k.method ?? 'GET') === method);
    if (known) describeRouteIfAbsent({ ...known, method });
    else describeRouteIfAbsent({ method, path, family: path.split('/').filter((s) => s && s !== 'api' && !s.startsWith('{'))[0] ?? 'other', summary: `${method} ${path}` });
  }
}

