/**
 * One metering rule for every door that serves data (issues 19, 23, 25):
 * the free tier is sent to 429 on the registry, then every door is tried.
 * Registry reads are refused on REST and /ai/query alike; carrier lookups,
 * unlimited on every plan (vetting specification, Limits), still answer on
 * REST, /ai/query and /mcp, each counted against the one lookup abuse guard,
 * until the guard refuses them on every door too. MCP results carry the limit
 * information in `_meta`. Health and readiness are never metered.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { UsageService } from '../../service/platform/usage.service.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const FREE = 3;
const GUARD = 6;

let root: string;
let svc: TestService;
let state: StateStore;
let dot: number;

beforeAll(async () => {
  root = await tempDir('proofline-every-door-');
  const dataDir = path.join(root, 'data');
  const config = await ingestSmallFmcsa(path.join(root, 'fmcsa'), dataDir);
  const input = path.join(root, 'input');
  await ensureSample(input, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
  await ingestAll(config, [registryPipeline], input);
  state = await StateStore.open(stateDbPath(dataDir));
  const usage = await UsageService.create({ dataDir, freeHourlyLimit: FREE, lookupGuardPerHour: GUARD });
  svc = await buildTestService(config, ['registry', 'fmcsa'], { state, usage });
}, 300_000);
afterAll(async () => {
  await svc?.deps.usage?.close();
  await svc?.close();
  await state?.close();
  await removeDir(root);
});

const mcp = (name: string, args: Record<string, unknown>) =>
  getJson(svc.app, '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
/** The DOT parameter's name of freight_carrier_safety (`dot_number` per the specification; older trees call it `dot`). */
async function dotParam(): Promise<string> {
  const list = await getJson(svc.app, '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  const tool = list.body.result.tools.find((t: { name: string }) => t.name === 'freight_carrier_safety');
  return 'dot_number' in (tool.inputSchema.properties ?? {}) ? 'dot_number' : 'dot';
}
const aiQuery = (q: string, type: string) =>
  getJson(svc.app, '/ai/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q, type }) });

describe('one metering rule for every door', () => {
  it('sends the free tier to 429 on the registry, then tries every door', async () => {
    for (let i = 0; i < FREE; i++) expect((await getJson(svc.app, '/api/company/AAPL')).status).toBe(200);
    const rest = await getJson(svc.app, '/api/company/AAPL');
    expect(rest.status).toBe(429);

    // Registry data through another door: refused alike.
    const ai = await aiQuery('AAPL', 'company');
    expect(ai.status).toBe(429);
    expect(ai.headers.get('retry-after')).not.toBeNull();
    expect(ai.body.usage).toMatchObject({ tier: 'free', meter_class: 'registry', hourly_limit: FREE, remaining: 0 });

    // The registry over MCP: refused alike, as a tool error carrying the limit information.
    const secTool = await mcp('sec_company', { ticker: 'AAPL' });
    expect(secTool.status).toBe(200);
    expect(secTool.body.result.isError).toBe(true);
    expect(secTool.body.result._meta['proofline/usage']).toMatchObject({ tier: 'free', meter_class: 'registry', remaining: 0 });

    // Carrier lookups are unlimited on every plan: every door still answers, each counted under the one guard.
    const carriers = await getJson(svc.app, '/api/carriers?name=trucking&limit=1');
    expect(carriers.status).toBe(200);
    expect(carriers.headers.get('ratelimit-limit')).toBe(String(GUARD));
    dot = carriers.body.results[0].dot_number;
    const aiCarrier = await aiQuery(String(dot), 'carrier');
    expect(aiCarrier.status).toBe(200);
    expect(aiCarrier.headers.get('ratelimit-remaining')).toBe(String(GUARD - 2));
    const param = await dotParam();
    const tool = await mcp('freight_carrier_safety', { [param]: dot });
    expect(tool.status).toBe(200);
    expect(tool.body.result.isError).toBeFalsy();
    expect(tool.body.result._meta['proofline/usage']).toMatchObject({
      tier: 'free',
      meter_class: 'lookup',
      requests_this_hour: 3,
      hourly_limit: GUARD,
      remaining: GUARD - 3,
    });

    // Up to the guard, then refused on every door.
    for (let i = 0; i < GUARD - 3; i++) expect((await getJson(svc.app, `/api/carrier/${dot}`)).status).toBe(200);
    expect((await getJson(svc.app, `/api/carrier/${dot}`)).status).toBe(429);
    expect((await aiQuery(String(dot), 'carrier')).status).toBe(429);
    const refused = await mcp('freight_carrier_safety', { [param]: dot });
    expect(refused.body.result.isError).toBe(true);
    expect(refused.body.result.content[0].text).toMatch(/abuse guard/);
    expect(refused.body.result._meta['proofline/usage']).toMatchObject({ remaining: 0, meter_class: 'lookup' });

    // Probes are never metered.
    expect((await getJson(svc.app, '/api/health')).status).toBe(200);
    expect((await getJson(svc.app, '/api/ready')).status).toBe(200);
    // Listing the tools is not a data read.
    const list = await getJson(svc.app, '/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(list.body.result.tools.length).toBeGreaterThan(0);
  });

  it('answers an MCP call with a malformed key 401, as REST does', async () => {
    const r = await getJson(svc.app, '/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Basic eDp5' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'freight_status', arguments: {} } }),
    });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(-32001);
  });
});
