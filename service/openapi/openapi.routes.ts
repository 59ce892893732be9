/**
 * GET /openapi.json (OpenAPI 3.1 from the route registry) and GET /docs (the
 * readable reference). Both are built on first request, after every family
 * has registered, and then served from memory.
 */
import type { H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { DEFAULT_FREE_HOURLY_LIMIT, DEFAULT_PRO_HOURLY_LIMIT } from '../platform/usage.service.ts';
import { renderDocsPage } from './docs-page.ts';
import { seedRoutesOf } from './known-routes.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { describeRoute } from '../platform/route-registry.ts';

describeRoute({
  method: 'GET',
  path: '/openapi.json',
  family: 'meta',
  metered: false,
  summary: 'This OpenAPI 3.1 document',
  responseDescription: 'OpenAPI 3.1 document',
});
describeRoute({
  method: 'GET',
  path: '/docs',
  family: 'meta',
  metered: false,
  summary: 'Readable API reference (HTML)',
  contentType: 'text/html',
});

export function registerOpenApiRoutes(app: H3, deps: ServiceDeps): void {
  let json: string | null = null;
  let html: string | null = null;
  let base = '';
  const refresh = () => {
    if (base !== deps.options.publicBaseUrl) {
      seedRoutesOf(app);
      base = deps.options.publicBaseUrl;
      json = JSON.stringify(buildOpenApiDocument(base, deps.options.version));
      html = renderDocsPage(base, deps.options.version, {
        free: deps.usage?.freeHourlyLimit ?? DEFAULT_FREE_HOURLY_LIMIT,
        pro: deps.usage?.proHourlyLimit ?? DEFAULT_PRO_HOURLY_LIMIT,
      });
    }
  };
  app.get('/openapi.json', () => {
    refresh();
    return new Response(json, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  });
  app.get('/docs', () => {
    refresh();
    return new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } });
  });
}
