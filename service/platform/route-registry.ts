/**
 * The route registry: every endpoint family describes its routes here, once,
 * and `/openapi.json`, the `/docs` page and the MCP/discovery manifests are
 * generated from it, so the documents cannot drift from the code.
 *
 * Usage, in `<family>.routes.ts`, beside the `app.get(...)` it documents:
 *
 * ```ts
 * import { describeRoute } from './route-registry.ts';
 * const filingsQuery = z.object({ form: z.enum(['10-K', '10-Q', '8-K']).optional() });
 * describeRoute({
 *   method: 'GET', path: '/api/company/{ticker}/filings', family: 'company',
 *   summary: 'Layer 3: filings with EDGAR URLs',
 *   params: { ticker: 'ticker or CIK' }, query: filingsQuery,
 *   response: filingsResponseSchema,              // optional zod schema of the 200 body
 *   statuses: [400, 404],                          // error statuses this route can answer
 * });
 * ```
 *
 * Paths use OpenAPI `{param}` syntax. Describing the same method+path twice
 * replaces the first description (last writer wins), so a family can refine
 * an entry the registry seeded for it.
 */
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDoc {
  method: HttpMethod;
  /** OpenAPI path, e.g. `/api/company/{ticker}`. */
  path: string;
  /** Endpoint family (becomes the OpenAPI tag), e.g. `company`, `quotes`, `carriers`. */
  family: string;
  summary: string;
  description?: string;
  /** Path parameters and their descriptions. */
  params?: Record<string, string>;
  /** zod object of the query string (values arrive as strings: use z.coerce). */
  query?: z.ZodObject;
  /** zod schema of a JSON request body (POST). */
  body?: z.ZodType;
  /** zod schema of the 200 body; omitted → documented as a JSON object. */
  response?: z.ZodType;
  /** One-line description of the 200 body when no schema is given. */
  responseDescription?: string;
  /** Error statuses this route can answer besides the ones every /api route can (429, 500). */
  statuses?: number[];
  /** False for routes outside the metered /api tree (no usage_meta). Default: path starts with /api/. */
  metered?: boolean;
  /** Response content type when not JSON (e.g. `text/html`). */
  contentType?: string;
  /** Status of the success answer when it is not 200 (201 for a created resource). */
  status?: 200 | 201;
}

const routes = new Map<string, RouteDoc>();

/** Registers (or replaces) the description of one route. */
export function describeRoute(doc: RouteDoc): void {
  routes.set(`${doc.method} ${doc.path}`, doc);
}

/** Registers a description only when the route has none yet (used to seed entries for families that did not describe themselves). */
export function describeRouteIfAbsent(doc: RouteDoc): void {
  const k = `${doc.method} ${doc.path}`;
  if (!routes.has(k)) routes.set(k, doc);
}

/** Every described route, sorted by path then method. */
export function listRoutes(): RouteDoc[] {
  return [...routes.values()].sort((a, b) => (a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path)));
}
