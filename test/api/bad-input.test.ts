/**
 * Bad input is a 4xx with a message, never a 5xx, a hang or a crash: every
 * GET route of the served OpenAPI document with odd values in each of its
 * path and query parameters, every POST route with malformed bodies, and the
 * MCP tools with wrong arguments, over all four domains of the small sample
 * plus a state store. Values that happen to be valid may answer 2xx or 404.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { transcriptsSampleGenerator } from '../../ingest/transcripts/transcripts.sample.ts';
import { createApiKey } from '../../lib/api-keys.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';
import { TOOLS } from '../../service/mcp/mcp.queries.ts';

/** Odd values for any parameter: empty, blank, signs, overflow, impossible dates, escapes, traversal, SQL, huge, non-ASCII. */
const ODD = [
  '',
  ' ',
  '0',
  '-1',
  '1.5',
  '1e309',
  'NaN',
  '99999999999999999999',
  '2024-13-01',
  '2024-02-30',
  '2023-02-29',
  '0000-00-00',
  'true',
  "a'b",
  '%',
  '..',
  '../../etc/passwd',
  'é漢字',
  '\u0000',
  'A'.repeat(3000),
  ';DROP TABLE x',
  '[]',
];
/** A valid value per path parameter, so each parameter is tried alone. */
const VALID_PATH: Record<string, string> = { ticker: 'AAPL', name: 'cook', leaf_hash: 'f'.repeat(64), dot: '1', id: 'POGC-0' };

let root: string;
let svc: TestService;
let state: StateStore;
let auth: Record<string, string>;

beforeAll(async () => {
  root = await tempDir('proofline-bad-input-');
  const dataDir = path.join(root, 'data');
  const config = await ingestSmallFmcsa(path.join(root, 'fmcsa'), dataDir);
  const input = path.join(root, 'input');
  await ensureSample(input, {
    scale: 'small',
    seed: 42,
    generators: [edgarSampleGenerator, quotesSampleGenerator, transcriptsSampleGenerator],
  });
  await ingestAll(config, [registryPipeline, quotesPipeline, transcriptsPipeline], input);
  state = await StateStore.open(stateDbPath(dataDir));
  // A Pro key with a limit no test reaches: every request is metered, none is a 429.
  const { secret } = await createApiKey(dataDir, { label: 'bad-input', hourlyLimit: 1_000_000_000 });
  auth = { authorization: `Bearer ${secret}` };
  svc = await buildTestService(config, ['registry', 'fmcsa', 'quotes', 'transcripts'], { state });
}, 300_000);
afterAll(async () => {
  await svc?.deps.usage?.close();
  await svc?.close();
  await state?.close();
  await removeDir(root);
});

/** A failure message naming the request, or null when the answer is acceptable for bad input. */
function problem(req: string, status: number, body: unknown): string | null {
  if (status >= 500) return `${req} → ${status} ${JSON.stringify(body).slice(0, 200)}`;
  if (status >= 400) {
    const b = body as { error?: unknown; status?: unknown };
    if (typeof b?.error !== 'string' || b.status !== status)
      return `${req} → ${status} without {error, status}: ${JSON.stringify(body).slice(0, 200)}`;
  }
  return null;
}

describe('bad input', () => {
  it('never answers 5xx on any GET route, whatever the path or query parameter holds', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body as {
      paths: Record<string, { get?: { parameters?: Array<{ in: string; name: string }> } }>;
    };
    const routes = Object.entries(doc.paths).filter(([p, ops]) => p.startsWith('/api') && ops.get);
    expect(routes.length).toBeGreaterThan(30);
    const problems: string[] = [];
    let requests = 0;
    const url = (route: string, pathValues: Record<string, string>, query: string) =>
      route.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(pathValues[k] ?? VALID_PATH[k] ?? 'x')) + query;
    for (const [route, ops] of routes) {
      const params = ops.get!.parameters ?? [];
      const tries: string[] = [];
      for (const p of params) {
        for (const v of ODD)
          tries.push(p.in === 'path' ? url(route, { [p.name]: v }, '') : url(route, {}, `?${p.name}=${encodeURIComponent(v)}`));
        if (p.in === 'query') tries.push(url(route, {}, `?${p.name}=1&${p.name}=2`)); // repeated
      }
      for (const t of tries) {
        requests++;
        const r = await getJson(svc.app, t, { headers: auth });
        const bad = problem(`GET ${t.slice(0, 120)}`, r.status, r.body);
        if (bad) problems.push(bad);
      }
    }
    expect(requests).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
  }, 300_000);

  it('answers a path that is not valid percent-encoding with a 400 naming the path', async () => {
    for (const p of ['/api/company/%E0%A4%A', '/api/person/%ZZ', '/api/verify/%ff', '/api/company/%']) {
      const r = await getJson(svc.app, p, { headers: auth });
      expect(r.status, p).toBe(400);
      expect(r.body, p).toMatchObject({ status: 400, parameter: 'path', error: expect.stringMatching(/not valid percent-encoded UTF-8/) });
    }
  });

  it('clamps a limit above its maximum on every route that takes one, and says so in limit_clamped', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body as {
      paths: Record<string, { get?: { parameters?: Array<{ in: string; name: string }> } }>;
    };
    /** Parameters some routes need besides `limit` (signals without a filter answer the index of types, which takes no limit). */
    const [{ dot_number: someDot }] = await svc.deps.readers.fmcsa!.query('SELECT min(dot_number) AS dot_number FROM carriers');
    const needs: Record<string, string> = {
      '/api/crashes': `&dot=${someDot}`,
      '/api/inspections': `&dot=${someDot}`,
      '/api/carriers': '&name=ab',
      '/api/search': '&q=apple',
      '/api/vetting': '&dot=1',
      '/api/signals': '&type=ai_adoption',
      '/api/watchlist': '&broker_id=x',
      '/api/monitoring/events': '&broker_id=x',
      '/api/webhooks/deliveries': '&broker_id=x',
      '/api/webhooks': '&broker_id=x',
    };
    const routes = Object.entries(doc.paths).filter(
      ([p, ops]) => p.startsWith('/api') && ops.get?.parameters?.some((x) => x.in === 'query' && x.name === 'limit'),
    );
    expect(routes.map(([p]) => p)).toEqual(
      expect.arrayContaining([
        '/api/carriers',
        '/api/red-flags',
        '/api/signals',
        '/api/search',
        '/api/company/{ticker}/filings',
        '/api/company/{ticker}/timeline',
        '/api/company/{ticker}/quote/history',
        '/api/search/transcripts',
        '/api/care',
        '/api/vetting',
      ]),
    );
    const problems: string[] = [];
    for (const [route] of routes) {
      const url = route.replace(/\{(\w+)\}/g, (_, k: string) => VALID_PATH[k] ?? 'x') + `?limit=100000${needs[route] ?? ''}`;
      const r = await getJson(svc.app, url, { headers: auth });
      const c = r.body?.limit_clamped;
      if (r.status !== 200 || c?.requested !== 100000 || !(c.max < 100000))
        problems.push(`GET ${url} → ${r.status} limit_clamped ${JSON.stringify(c)}`);
    }
    expect(problems).toEqual([]);
  });

  it('answers malformed POST bodies with a 4xx naming the problem', async () => {
    const care = await getJson(svc.app, '/api/care', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        shipment: { ref: 'R1', commodity: 'widgets', value_usd: 10 },
        parties: { broker: 'B', carrier: { dot_number: 1 } },
      }),
    });
    expect(care.status).toBe(201);
    const bodies = [
      '',
      'null',
      '[]',
      '{}',
      '"x"',
      '1',
      '{"a":',
      'x'.repeat(100),
      '['.repeat(5000) + ']'.repeat(5000),
      '{"__proto__":{"a":1}}',
    ];
    const routes = [
      '/api/vet',
      '/api/vet-preview',
      '/api/batch-vet',
      '/api/care',
      `/api/care/${care.body.document_id}/event`,
      '/api/care/POGC-0/event',
    ];
    const problems: string[] = [];
    for (const route of routes) {
      for (const body of bodies) {
        const r = await getJson(svc.app, route, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
        const bad = problem(`POST ${route} ${body.slice(0, 30)}`, r.status, r.body);
        if (bad) problems.push(bad);
        if (r.status < 400) problems.push(`POST ${route} ${body.slice(0, 30)} → ${r.status}`);
      }
      const plain = await getJson(svc.app, route, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: '{}' });
      if (plain.status !== 400) problems.push(`POST ${route} as text/plain → ${plain.status}`);
    }
    for (const dot of [0, -1, 1.5, '0', '00000000', '999999999', null, true, [], {}, '1e3', '１２３', 1e30, 'NaN']) {
      for (const route of ['/api/vet', '/api/vet-preview']) {
        const r = await getJson(svc.app, route, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ dot_number: dot, broker_id: 'b1' }),
        });
        if (r.status !== 400) problems.push(`POST ${route} dot_number ${JSON.stringify(dot)} → ${r.status}`);
        else if (r.body.parameter !== 'dot_number')
          problems.push(`POST ${route} dot_number ${JSON.stringify(dot)}: 400 names ${r.body.parameter}`);
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('answers every MCP tool called with wrong arguments with a JSON-RPC or tool error', async () => {
    const rpc = async (body: unknown) =>
      getJson(svc.app, '/mcp', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
    const list = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tools = (list.body.result.tools as Array<{ name: string }>).map((t) => t.name);
    expect(tools).toHaveLength(TOOLS.length);
    const problems: string[] = [];
    for (const name of tools) {
      for (const args of [
        {},
        { dot_number: 0 },
        { dot_number: 'x'.repeat(500) },
        { document_id: '../x' },
        { query: '%' },
        { limit: 1e12 },
        'str',
      ]) {
        const r = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } });
        if (r.status >= 500 || !(r.body?.error || r.body?.result))
          problems.push(`${name} ${JSON.stringify(args).slice(0, 40)} → ${r.status} ${JSON.stringify(r.body).slice(0, 120)}`);
      }
    }
    for (const bad of [
      { jsonrpc: '2.0', id: 3, method: 'bogus' },
      { jsonrpc: '1.0' },
      [],
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope', arguments: {} } },
    ]) {
      const r = await rpc(bad);
      if (r.status >= 500) problems.push(`${JSON.stringify(bad)} → ${r.status}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
