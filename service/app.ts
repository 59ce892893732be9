/**
 * The HTTP application. `createApp(deps)` wires every endpoint family; it
 * never reads the environment and never listens (see main.ts). Tests call
 * `app.fetch(new Request(...))` in process.
 */
import { H3 } from 'h3';
import { registerCompanyRoutes } from './company/company.routes.ts';
import { registerRegistryLayerRoutes } from './registry-layers/registry-layers.routes.ts';
import { registerCarrierRoutes } from './carriers/carriers.routes.ts';
import { registerExportRoutes } from './export/export.routes.ts';
import { registerCareRoutes } from './care/care.routes.ts';
import { registerVettingRoutes } from './vetting/vetting.routes.ts';
import { registerCreditsRoutes } from './vetting/credits.routes.ts';
import { registerAttestationRoutes } from './attestation/attestation.routes.ts';
import { registerMcpRoutes } from './mcp/mcp.routes.ts';
import type { ServiceDeps } from './platform/deps.ts';
import { registerHealthRoutes } from './health/health.routes.ts';
import { registerDiscoveryRoutes } from './discovery/discovery.routes.ts';
import { registerAdminRoutes } from './admin/admin.routes.ts';
import { errorResponse, explainMalformedPath } from './platform/http.ts';
import { registerQuotesRoutes } from './quotes/quotes.routes.ts';
import { registerTranscriptsRoutes } from './transcripts/transcripts.routes.ts';
import { installApiLayer } from './platform/api-middleware.ts';
import { registerReceiptRoutes } from './receipts/receipts.routes.ts';
import { registerSearchRoutes } from './search/search.routes.ts';
import { registerStatsRoutes } from './stats/stats.routes.ts';
import { registerOpenApiRoutes } from './openapi/openapi.routes.ts';
import { registerMonitoringRoutes } from './monitoring/monitoring.routes.ts';
import { registerWebhookRoutes } from './monitoring/webhooks.routes.ts';

export function createApp(deps: ServiceDeps): H3 {
  const app = new H3({
    silent: true,
    onError: (error, event) => errorResponse(explainMalformedPath(error, event), deps.log),
  });
  deps.warmups = []; // filled by the families below (search indexes); main.ts awaits them before listening
  // Endpoint families: one line each.
  deps.apiLayer = installApiLayer(app, deps); // metering, limits, hot cache, ETag/304, compression, CORS: applies to every route
  registerHealthRoutes(app, deps);
  registerReceiptRoutes(app, deps);
  registerSearchRoutes(app, deps);
  registerStatsRoutes(app, deps);
  registerOpenApiRoutes(app, deps);
  registerDiscoveryRoutes(app, deps);
  registerAdminRoutes(app, deps);
  registerCompanyRoutes(app, deps);
  registerRegistryLayerRoutes(app, deps);
  registerQuotesRoutes(app, deps);
  registerTranscriptsRoutes(app, deps);
  registerCarrierRoutes(app, deps);
  registerExportRoutes(app, deps);
  registerVettingRoutes(app, deps);
  registerCareRoutes(app, deps);
  registerCreditsRoutes(app, deps);
  registerAttestationRoutes(app, deps);
  registerMonitoringRoutes(app, deps);
  registerWebhookRoutes(app, deps);
  registerMcpRoutes(app, deps);
  return app;
}
