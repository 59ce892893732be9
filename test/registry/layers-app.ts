/**
 * An app with only the registry routes (identity card + layers), so these
 * suites do not depend on every other family being present in service/app.ts.
 */
import { H3 } from 'h3';
import { silentLogger } from '../../lib/log.ts';
import type { Config } from '../../lib/config.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { registerCompanyRoutes } from '../../service/company/company.routes.ts';
import type { ServiceDeps } from '../../service/platform/deps.ts';
import { errorResponse } from '../../service/platform/http.ts';
import { registerRegistryLayerRoutes } from '../../service/registry-layers/registry-layers.routes.ts';

export async function buildRegistryApp(config: Config): Promise<{ app: H3; close(): Promise<void> }> {
  const registry = await SnapshotReader.open(config.dataDir, 'registry', { poolSize: 2 });
  const deps: ServiceDeps = {
    readers: { registry },
    log: silentLogger,
    now: () => new Date(),
    startedAt: new Date(),
    options: { publicBaseUrl: 'http://proofline.test', snapshotStaleHours: 48, version: '0.0.0-test', dataDir: config.dataDir },
  } as ServiceDeps;
  const app = new H3({ silent: true, onError: (e) => errorResponse(e) });
  registerCompanyRoutes(app, deps);
  registerRegistryLayerRoutes(app, deps);
  return { app, close: () => registry.close() };
}

/** GET helper returning status, parsed JSON and the headers. */
export async function getJson(app: H3, path: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await app.fetch(new Request(`http://proofline.test${path}`));
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text), headers: res.headers };
  } catch {
    return { status: res.status, body: text, headers: res.headers };
  }
}
