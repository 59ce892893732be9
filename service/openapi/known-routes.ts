/**
 * Makes /openapi.json list every route the app really serves: for each
 * registered h3 route without a description, a description from KNOWN (for
 * families that did not call describeRoute) or, failing that, a minimal one
 * derived from the path. Routes that are described but not served are left
 * out of nothing (families describe what they register).
 */
import type { H3 } from 'h3';
import { describeRouteIfAbsent, listRoutes, type HttpMethod, type RouteDoc } from '../platform/route-registry.ts';

/** Descriptions of the discovery and MCP documents (families that serve files, not zod-validated queries), used only when they did not describe themselves; every /api family describes its own routes beside its `app.get`. */
const KNOWN: Array<Omit<RouteDoc, 'method'> & { method?: HttpMethod }> = [
  { path: '/llms.txt', family: 'discovery', metered: false, summary: 'llms.txt summary of this service', contentType: 'text/plain' },
  { path: '/', family: 'discovery', metered: false, summary: 'Home page (HTML)', contentType: 'text/html' },
];

/** Served paths the document leaves out, and why. */
const UNDOCUMENTED: Record<string, string> = {
  'GET /mcp': 'the stateless MCP endpoint takes POST only (GET answers 405); POST /mcp describes it',
  // Deprecated aliases of PATCH …/{id} {"status":"active"} (docs/monitoring.md): still served for existing clients, not
  // described, since `{id}/enable` beside `deliveries/{id}` is an ambiguous path pair to OpenAPI tools (redocly).
  'POST /api/webhooks/{id}/enable': 'deprecated alias of PATCH /api/webhooks/{id} {"status":"active"}',
  'POST /admin/webhooks/{id}/enable': 'deprecated alias of PATCH /admin/webhooks/{id} {"status":"active"}',
};

function isSeeded(method: string, path: string): boolean {
  return listRoutes().some((r) => r.method === method && r.path === path);
}

/** Adds descriptions for every route `app` serves that has none. Idempotent. */
export function seedRoutesOf(app: H3): void {
  const served = (app as unknown as { '~routes': Array<{ method: string; route: string }> })['~routes'] ?? [];
  for (const r of served) {
    const method = (r.method || 'GET').toUpperCase() as HttpMethod;
    if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
    const path = r.route.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*\*:?([A-Za-z0-9_]*)/g, (_m, n: string) => `{${n || 'path'}}`);
    if (isSeeded(method, path) || UNDOCUMENTED[`${method} ${path}`]) continue;
    const known = KNOWN.find((k) => k.path === path && (k.method ?? 'GET') === method);
    if (known) describeRouteIfAbsent({ ...known, method });
    else
      describeRouteIfAbsent({
        method,
        path,
        family: path.split('/').filter((s) => s && s !== 'api' && !s.startsWith('{'))[0] ?? 'other',
        summary: `${method} ${path}`,
      });
  }
}
