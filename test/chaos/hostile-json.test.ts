/**
 * Chaos: a fuzz pass of hostile JSON (lone surrogates, depth, big integers,
 * non-finite numbers, duplicate names, `__proto__`) on every POST route of the
 * OpenAPI document and every MCP tool, over a service with the fmcsa and
 * registry snapshots and a state store: never a 5xx, and what the canonical
 * hashing cannot take is a 400 naming the field before anything is written
 * (issue 25). Also: the admin credit commands' malformed requests, and
 * presented-but-empty credentials (401, never the free tier).
 */
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

const ADMIN = 'chaos-admin-token';

/** Hostile JSON fragments (as text) and whether the guard must refuse them. */
const HOSTILE: Array<[string, boolean]> = [
  ['"\\ud800"', true],
  ['"ok \\udfff tail"', true],
  ['9007199254740993', true],
  ['-123456789012345678901234567890', true],
  ['1e400', true],
  [`${'['.repeat(2000)}${']'.repeat(2000)}`, true],
  [`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`, true],
  ['{"__proto__":{"polluted":true}}', true],
  ['{"x":1,"x":2}', true],
  ['"\\ud83d\\ude00"', false],
  ['9007199254740991', false],
  ['null', false],
  ['"\\u0000"', false],
];

/** A body: the route's valid members with one of them (or a new member) replaced by a hostile fragment. */
function hostileBody(valid: Record<string, unknown>, at: string, fragment: string): string {
  const members = Object.entries(valid).map(([k, v]) => `${JSON.stringify(k)}:${k === at ? fragment : JSON.stringify(v)}`);
  if (!(at in valid)) members.push(`${JSON.stringify(at)}:${fragment}`);
  return `{${members.join(',')}}`;
}

let root: string;
let svc: TestService;
let state: StateStore;
let careId: string;

beforeAll(async () => {
  root = await tempDir('proofline-hostile-json-');
  const dataDir = path.join(root, 'data');
  const config = await ingestSmallFmcsa(path.join(root, 'fmcsa'), dataDir, { RATE_LIMIT_FREE_PER_HOUR: '1000000' });
  const input = path.join(root, 'input');
  await ensureSample(input, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
  await ingestAll(config, [registryPipeline], input);
  state = await StateStore.open(stateDbPath(dataDir));
  svc = await buildTestService(config, ['registry', 'fmcsa'], { state });
  svc.deps.options.adminToken = ADMIN;
  const care = await getJson(svc.app, '/api/care', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      shipment: { ref: 'R1', commodity: 'widgets', value_usd: 10 },
      parties: { broker: 'B', carrier: { dot_number: 1 } },
    }),
  });
  careId = care.body.document_id;
}, 300_000);
afterAll(async () => {
  await svc?.deps.usage?.close();
  await svc?.close();
  await state?.close();
  await removeDir(root);
});

/** A valid body per POST route (the fuzz replaces one member at a time). */
function validBodies(): Record<string, Record<string, unknown>> {
  return {
    '/api/vet': { dot_number: 1, broker_id: 'b1' },
    '/api/vet-preview': { dot_number: 1 },
    '/api/batch-vet': { carriers: [{ dot_number: 1 }], broker_id: 'b1' },
    '/api/care': { shipment: { ref: 'R2', commodity: 'w', value_usd: 1 }, parties: { broker: 'B', carrier: { dot_number: 1 } } },
    [`/api/care/${careId}/event`]: { stage: 'pickup', actor: 'driver', evidence: { temp_c: 3 } },
    '/ai/query': { q: 'apple', type: 'company' },
    '/admin/credits': { op: 'show', account: 'acme' },
    '/api/watchlist': { dot_numbers: [1], broker_id: 'b1' },
    '/api/monitoring/settings': { auto_watch: true, broker_id: 'b1' },
    '/api/webhooks': { url: 'https://hooks.example.com/p', event_types: ['carrier.changed'], broker_id: 'b1' },
    '/admin/webhooks': { url: 'https://hooks.example.com/ops', event_types: ['run.failed'] },
  };
}

/** POST routes that take no body (the body is never read): an id in the path and the caller's account. */
function bodylessRoutes(): string[] {
  return [
    `/api/webhooks/${careId}/enable`,
    `/api/webhooks/deliveries/${careId}/redeliver`,
    `/admin/webhooks/${careId}/enable`,
    `/admin/webhooks/deliveries/${careId}/redeliver`,
  ];
}
const adminAuth = (route: string): Record<string, string> => (route.startsWith('/admin/') ? { authorization: `Bearer ${ADMIN}` } : {});

describe('chaos: hostile JSON on every POST route and MCP tool', () => {
  it('covers every POST route of the OpenAPI document', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body as { paths: Record<string, { post?: unknown }> };
    const posts = Object.entries(doc.paths)
      .filter(([, ops]) => ops.post)
      .map(([p]) => p.replace('{id}', careId).replace('{document_id}', careId));
    const covered = new Set(Object.keys(validBodies()).concat('/mcp', ...bodylessRoutes()));
    expect(posts.filter((p) => !covered.has(p))).toEqual([]);
  });

  it('never answers 5xx, and refuses what the hashing cannot take with a 400 naming the field, on every POST route', async () => {
    const routes = validBodies();
    const problems: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(routes)),
        fc.constantFrom(...HOSTILE),
        fc.nat(),
        async (route, [fragment, refused], pick) => {
          const valid = routes[route]!;
          const keys = [...Object.keys(valid), 'extra_member'];
          const at = keys[pick % keys.length]!;
          const body = hostileBody(valid, at, fragment);
          const r = await getJson(svc.app, route, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...adminAuth(route) },
            body,
          });
          const name = `POST ${route} ${at}=${fragment.slice(0, 30)}`;
          if (r.status >= 500) problems.push(`${name} → ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
          if (refused && r.status !== 400) problems.push(`${name} → ${r.status}, expected 400`);
          if (refused && r.status === 400 && !String(r.body.parameter ?? '').startsWith(at === 'extra_member' ? 'extra_member' : at))
            problems.push(`${name}: 400 names ${r.body.parameter}`);
        },
      ),
      { numRuns: 250, seed: 25 },
    );
    expect(problems).toEqual([]);
  }, 240_000);

  it('never answers 5xx on a POST route that takes no body, whatever body comes', async () => {
    const problems: string[] = [];
    for (const route of bodylessRoutes())
      for (const [fragment] of HOSTILE) {
        const r = await getJson(svc.app, route, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...adminAuth(route) },
          body: `{"x": ${fragment}}`,
        });
        if (r.status >= 500) problems.push(`POST ${route} ${fragment.slice(0, 30)} → ${r.status}`);
      }
    expect(problems).toEqual([]);
  });

  it('never answers 5xx on any MCP tool called with hostile arguments', async () => {
    const rpc = (text: string) =>
      getJson(svc.app, '/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: text,
      });
    const list = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    const tools = (list.body.result.tools as Array<{ name: string; inputSchema: { properties?: Record<string, unknown> } }>).map((t) => ({
      name: t.name,
      params: Object.keys(t.inputSchema.properties ?? {}),
    }));
    const problems: string[] = [];
    for (const tool of tools) {
      for (const [fragment, refused] of HOSTILE) {
        const at = tool.params[0] ?? 'dot_number';
        const text = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":${JSON.stringify(tool.name)},"arguments":{${JSON.stringify(at)}:${fragment}}}}`;
        const r = await rpc(text);
        if (r.status >= 500 || !(r.body?.error || r.body?.result))
          problems.push(`${tool.name} ${at}=${fragment.slice(0, 30)} → ${r.status} ${JSON.stringify(r.body).slice(0, 120)}`);
        if (refused && !r.body?.error && !r.body?.result?.isError) problems.push(`${tool.name} ${at}=${fragment.slice(0, 30)} accepted`);
      }
    }
    expect(problems).toEqual([]);
  }, 240_000);

  it('answers malformed admin credit commands with 4xx: an unknown account on show is 404, a lone surrogate 400', async () => {
    const admin = (body: string) =>
      getJson(svc.app, '/admin/credits', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
        body,
      });
    const unknown = await admin('{"op":"show","account":"nobody-here"}');
    expect(unknown.status).toBe(404);
    const lone = await admin('{"op":"grant","account":"x\\ud800","n":1}');
    expect(lone.status).toBe(400);
    expect(lone.body.parameter).toBe('account');
  });

  it('answers an empty Bearer, a Bearer without a token and Basic auth with 401, never as the free tier', async () => {
    for (const authorization of ['', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Basic ']) {
      const r = await getJson(svc.app, '/api/stats', { headers: { authorization } });
      expect(r.status, JSON.stringify(authorization)).toBe(401);
    }
  });
});
