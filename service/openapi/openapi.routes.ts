/**
 * GET /openapi.json (OpenAPI 3.1 from the route registry), GET /docs (Redoc over
 * it, its script served from node_modules at /docs/redoc.standalone.js) and GET
 * /docs/rules (shared rules and pricing). Built on first request, after every
 * family has registered, and then served from memory (the OpenAPI document as bytes).
 */
import type { H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { DEFAULT_FREE_HOURLY_LIMIT, DEFAULT_PRO_HOURLY_LIMIT } from '../platform/usage.service.ts';
import { readRedocBundle, REDOC_SCRIPT_PATH, renderDocsPage } from './docs-page.ts';
import { renderRulesPage } from './rules-page.ts';
import { seedRoutesOf } from './known-routes.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { PreparedDocument } from '../platform/prepared-document.ts';
import { openApiDocumentAnswer } from './openapi.schema.ts';
import { toFastResponse } from '../platform/response-finish.ts';

describeRoute({
  method: 'GET',
  path: '/openapi.json',
  family: 'meta',
  metered: false,
  summary: 'This OpenAPI 3.1 document',
  response: openApiDocumentAnswer,
});
describeRoute({
  method: 'GET',
  path: '/docs',
  family: 'meta',
  metered: false,
  summary: 'API reference (Redoc over /openapi.json, HTML)',
  contentType: 'text/html',
});
describeRoute({
  method: 'GET',
  path: '/docs/rules',
  family: 'meta',
  metered: false,
  summary: 'Rules every endpoint shares: errors, limits, caching, receipts, pricing (HTML)',
  contentType: 'text/html',
});
describeRoute({
  method: 'GET',
  path: REDOC_SCRIPT_PATH,
  family: 'meta',
  metered: false,
  summary: "The reference page's script (Redoc standalone bundle, served from node_modules)",
  contentType: 'application/javascript',
});

const HTML_TYPE = 'text/html; charset=utf-8';

export function registerOpenApiRoutes(app: H3, deps: ServiceDeps): void {
  let json: PreparedDocument | null = null;
  let html: PreparedDocument | null = null;
  let rules: PreparedDocument | null = null;
  let base = '';
  const refresh = () => {
    if (base !== deps.options.publicBaseUrl) {
      seedRoutesOf(app);
      base = deps.options.publicBaseUrl;
      // Encoded, tagged and compressed once: a 344 KB text decoded, compared and encoded again on every request held
      // it to 392 req/s at full scale (issue 22); the API layer answers from these bytes (platform/prepared-document.ts).
      json = new PreparedDocument(JSON.stringify(buildOpenApiDocument(base, deps.options.version)), 'application/json; charset=utf-8');
      // The two HTML pages likewise (issue 22: /docs/rules, 66 KB, was a web Response per request whose body the layer
      // streamed in chunks, 313 µs of CPU a request, without the ETag and compression DOCUMENT_PATHS promises).
      html = new PreparedDocument(renderDocsPage(deps.options.version), HTML_TYPE);
      rules = new PreparedDocument(
        renderRulesPage(base, deps.options.version, {
          free: deps.usage?.freeHourlyLimit ?? DEFAULT_FREE_HOURLY_LIMIT,
          pro: deps.usage?.proHourlyLimit ?? DEFAULT_PRO_HOURLY_LIMIT,
        }),
        HTML_TYPE,
      );
    }
  };
  app.get('/openapi.json', () => {
    refresh();
    return json!.response();
  });
  app.get('/docs', () => {
    refresh();
    return html!.response();
  });
  app.get('/docs/rules', () => {
    refresh();
    return rules!.response();
  });
  // The bundle's bytes as they were read (1.1 MB), finished as a layer answer: written with one `end` by the node
  // listener (node-listener.ts), not copied twice into a web Response and streamed in chunks (issue 22: 1,417 req/s,
  // p99 11 ms at full scale). Same status, headers and bytes, with the length given.
  app.get(REDOC_SCRIPT_PATH, async () =>
    toFastResponse({
      status: 200,
      headers: { 'content-type': 'application/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400' },
      body: await readRedocBundle(),
    }),
  );
}
