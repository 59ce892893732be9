/**
 * Our publisher, checked against the publisher conformance checklist
 * (../shared/notes/discovery-mcp.md) in process, and our own agent run
 * against it: in process through app.fetch and over a real loopback server,
 * at tier 2 and at tier 3 with a secp256k1 key generated here.
 */
import { TOOLS } from '../../service/mcp/mcp.queries.ts';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { serve } from 'h3';
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addressFromSecretKey,
  createBookmark,
  discover,
  generateSecretKey,
  reverify,
  type DiscoverOptions,
} from '../../lib/discovery/index.ts';
import { sha256Hex } from '../../lib/hash.ts';
import type { ServiceOptions } from '../../service/platform/deps.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { hashOf, tinyRegistry } from './discovery-helpers.ts';

const BASE = 'http://proofline.test';
let dir: string;
let config: Awaited<ReturnType<typeof tinyRegistry>>['config'];
const open: TestService[] = [];

async function service(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const svc = await buildTestService(config, ['registry'], {
    options: { publicBaseUrl: BASE, snapshotStaleHours: 48, version: '0.0.0-test', dataDir: config.dataDir, ...options },
  });
  open.push(svc);
  return svc;
}
const inProcess = (svc: TestService): DiscoverOptions => ({ fetch: (u, i) => svc.app.fetch(new Request(u, i)), allowPrivate: true });

beforeAll(async () => {
  ({ dir, config } = await tinyRegistry());
});
afterAll(async () => {
  for (const s of open) await s.close();
  await removeDir(dir);
});

const FILES: [string, number][] = [
  ['/.well-known/ai', 86400],
  ['/ai/knowledge.json', 3600],
  ['/ai/feed.json', 1800],
  ['/.well-known/archive', 3600],
  ['/ai/pages.json', 3600],
];
const SIX = ['official-policy', 'legal', 'technical-documentation', 'marketing', 'editorial', 'community'];

describe('publisher: /.well-known/ai and its files', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await service({
      org: { name: 'Proofline Test', domain: 'proofline.test', mission: 'Testing the manifest.', sectors: ['testing', 'provenance'] },
    });
  });

  it('serves every file directly as JSON with CORS *, the spec TTL and a strong ETag', async () => {
    for (const [p, ttl] of FILES) {
      const r = await svc.app.fetch(new Request(`${BASE}${p}`, { redirect: 'manual' }));
      expect(r.status, p).toBe(200);
      expect(r.headers.get('content-type'), p).toMatch(/^application\/json/);
      expect(r.headers.get('access-control-allow-origin'), p).toBe('*');
      expect(r.headers.get('cache-control'), p).toBe(`public, max-age=${ttl}`);
      expect(r.headers.get('etag'), p).toMatch(/^"[0-9a-f]{64}"$/);
      JSON.parse(await r.text());
    }
  });

  it('answers 304 with an empty body on a matching If-None-Match (strong or weak form)', async () => {
    const first = await svc.app.fetch(new Request(`${BASE}/.well-known/ai`));
    const etag = first.headers.get('etag')!;
    const doc = (await first.json()) as { _signature: { contentHash: string } };
    expect(etag).toBe(`"${doc._signature.contentHash.slice(7)}"`);
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`]) {
      const r = await svc.app.fetch(new Request(`${BASE}/.well-known/ai`, { headers: { 'if-none-match': inm } }));
      expect(r.status).toBe(304);
      expect(await r.text()).toBe('');
      expect(r.headers.get('etag')).toBe(etag);
    }
    expect((await svc.app.fetch(new Request(`${BASE}/.well-known/ai`, { headers: { 'if-none-match': '"other"' } }))).status).toBe(200);
  });

  it('has the required members, organization from config and truthful capabilities', async () => {
    const { body: m } = await getJson(svc.app, '/.well-known/ai');
    expect(m).toMatchObject({ specVersion: '1.1.1-draft', schemaVersion: '2026-02', standard: 'ai-discovery' });
    expect(new Date(m.generated).toISOString()).toBe(m.generated);
    expect(m.organization).toEqual({
      name: 'Proofline Test',
      domain: 'proofline.test',
      mission: 'Testing the manifest.',
      sector: ['testing', 'provenance'],
    });
    expect(m.coreConcepts.length).toBeGreaterThan(0);
    for (const c of m.coreConcepts) expect(Object.keys(c).sort()).toEqual(['definition', 'term']);
    expect(Object.keys(m.capabilities).sort()).toEqual(['archive', 'feed', 'knowledge', 'mcp', 'pages', 'query']);
    for (const [name, c] of Object.entries<any>(m.capabilities)) {
      const extra = name === 'mcp' ? ['protocol', 'tools', 'transport'] : [];
      expect(Object.keys(c).sort(), name).toEqual(['auth', 'available', 'languages', 'rateLimit', 'safety', 'url', ...extra].sort());
      expect(typeof c.available).toBe('boolean');
      if (name === 'mcp') continue;
      expect(c.available).toBe(true);
      expect((await svc.app.fetch(new Request(c.url))).status, c.url).toBe(200);
    }
    // Only true claims (issue 19): /mcp is not read-only (freight_carrier_vet writes a record and spends a credit);
    // /mcp and /ai/query are metered by the one rule of every door (issue 25): registry reads against the tier,
    // carrier lookups (unlimited on every plan) against the abuse guard.
    expect(m.capabilities.mcp.safety).not.toMatch(/^read-only/i);
    expect(m.capabilities.mcp.safety).toMatch(/freight_carrier_vet makes a signed vetting record and spends one credit/);
    for (const name of ['mcp', 'query'])
      expect(m.capabilities[name].rateLimit, name).toMatch(/lookup abuse guard.*unlimited on every plan/);
    // The MCP tools listed are exactly tools/list's (one registry), each with its one-line description; the safety
    // text names the one tool that writes.
    const routesServed = ((svc.app as any)['~routes'] as { route?: string }[]).map((r) => r.route);
    if (routesServed.includes('/mcp')) {
      expect(m.capabilities.mcp.tools.map((t: { name: string }) => t.name)).toEqual(TOOLS.map((t) => t.name));
      for (const t of m.capabilities.mcp.tools) expect(t.description.length).toBeGreaterThan(20);
      expect(m.capabilities.mcp.safety).toMatch(/^Not read-only: freight_carrier_vet/);
      const llms = await (await svc.app.fetch(new Request(`${BASE}/llms.txt`))).text();
      for (const t of TOOLS) expect(llms).toContain(`- ${t.name}(`);
    }
    // MCP is declared available exactly when this app has an /mcp route.
    const routes = ((svc.app as any)['~routes'] as { route?: string }[]).map((r) => r.route);
    expect(m.capabilities.mcp).toMatchObject({ url: `${BASE}/mcp`, available: routes.includes('/mcp') });
    if (m.capabilities.mcp.available) {
      const init = await svc.app.fetch(
        new Request(m.capabilities.mcp.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'discovery-test', version: '1' } },
          }),
        }),
      );
      expect(init.status).toBe(200);
      expect(await init.text()).toContain('protocolVersion');
    }
    expect(m.technology.signing.receiptKeys).toBe(`${BASE}/.well-known/proofline-keys.json`);
    const apps = Object.fromEntries(m.applications.map((a: any) => [a.name, a.endpoints]));
    expect(apps['Company registry API']).toContain('GET /api/company/:ticker');
    expect(apps['AI discovery files']).toContain('GET /.well-known/ai');
    for (const endpoints of Object.values<string[]>(apps)) for (const e of endpoints) expect(routes).toContain(e.split(' ')[1]);
  });

  it('gives every knowledge section a spec assertionType and every feed item the required fields', async () => {
    const { body: k } = await getJson(svc.app, '/ai/knowledge.json');
    for (const s of ['summary', 'glossary', 'products', 'technology']) expect(SIX, s).toContain(k[s].assertionType);
    expect(k.products.items.map((p: any) => p.name)).toContain('Company registry API');
    const { body: f } = await getJson(svc.app, '/ai/feed.json');
    for (const item of f.items) {
      for (const field of ['id', 'title', 'url', 'published', 'assertionType', 'summary'])
        expect(item[field], `${item.id} ${field}`).toBeTruthy();
      expect(SIX).toContain(item.assertionType);
      expect(item.keyFacts.length).toBeGreaterThan(0);
      expect(item.relatedConcepts.length).toBeGreaterThan(0);
    }
    const runs = f.items.filter((i: any) => i.id.startsWith('snapshot:registry:'));
    expect(runs).toHaveLength(1);
    expect(runs[0].id).toBe(`snapshot:registry:${svc.deps.readers.registry.manifest!.snapshot_id}`);
    expect(f.items.some((i: any) => i.id === 'release:0.0.0-test')).toBe(true);
  });

  it('signs every file at tier 2 with the RFC 8785 content hash', async () => {
    for (const [p] of FILES.concat([['/ai/query', 3600]])) {
      const { body } = await getJson(svc.app, p);
      expect(body._signature, p).toMatchObject({ contentHash: hashOf(body), canonicalization: 'RFC8785', method: 'sha256-rfc8785' });
    }
  });

  it('hashes in the page manifest the bytes actually served at each path', async () => {
    const { body } = await getJson(svc.app, '/ai/pages.json');
    expect(body.standard).toBe('ai-page-manifest');
    expect(body.pages.map((p: any) => p.path)).toEqual([
      '/',
      '/llms.txt',
      '/.well-known/ai',
      '/ai/knowledge.json',
      '/ai/feed.json',
      '/ai/query',
    ]);
    for (const p of body.pages) {
      const bytes = new Uint8Array(await (await svc.app.fetch(new Request(`${BASE}${p.path}`))).arrayBuffer());
      expect(p.contentHash, p.path).toBe(`sha256:${sha256Hex(bytes)}`);
    }
  });

  it('keeps an ai-archive record for every published file with a well-formed hash', async () => {
    const { body: a } = await getJson(svc.app, '/.well-known/archive');
    expect(a.standard).toBe('ai-archive');
    const ids = a.archive.map((r: any) => r.versionId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of a.archive) {
      expect(r.contentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(r.publishedAt).toBeTruthy();
      if (r.supersedes) expect(ids).toContain(r.supersedes);
    }
    const { body: m } = await getJson(svc.app, '/.well-known/ai');
    expect(a.archive.filter((r: any) => r.resource === '/.well-known/ai').at(-1).contentHash).toBe(m._signature.contentHash);
  });

  it('puts the ai-discovery link in the home page head and a Link header on HTML responses (HEAD too)', async () => {
    for (const method of ['GET', 'HEAD']) {
      const r = await svc.app.fetch(new Request(`${BASE}/`, { method }));
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.headers.get('link')).toBe('</.well-known/ai>; rel="ai-discovery"; type="application/json"');
    }
    const page = await (await svc.app.fetch(new Request(`${BASE}/`))).text();
    const head = page.slice(0, page.indexOf('</head>'));
    expect(head).toContain('<link rel="ai-discovery" type="application/json" href="/.well-known/ai">');
    expect(page).toContain('"@type":"Organization"');
    // JSON responses get no discovery Link header
    expect((await svc.app.fetch(new Request(`${BASE}/ai/feed.json`))).headers.get('link')).toBeNull();
  });

  it('adds the Link header to every HTML page of the app, whichever family serves it', async () => {
    const routes = ((svc.app as any)['~routes'] as { route?: string; method?: string }[]).filter(
      (r) => r.method === 'GET' && r.route && !r.route.includes(':'),
    );
    let html = 0;
    for (const r of routes) {
      const res = await svc.app.fetch(new Request(`${BASE}${r.route}`));
      await res.arrayBuffer();
      if (!/^text\/html/.test(res.headers.get('content-type') ?? '')) continue;
      html++;
      expect(res.headers.get('link'), r.route).toMatch(/<\/\.well-known\/ai>; rel="ai-discovery"/);
    }
    expect(html).toBeGreaterThan(0);
  });

  it('publishes the JSON Schema its manifest declares in $schema', async () => {
    const { body: m } = await getJson(svc.app, '/.well-known/ai');
    const res = await svc.app.fetch(new Request(m.$schema));
    expect(res.status).toBe(200);
    const schema = (await res.json()) as Record<string, any>;
    expect(schema).toMatchObject({ $id: m.$schema, type: 'object' });
    expect(schema.required).toEqual(
      expect.arrayContaining(['specVersion', 'schemaVersion', 'standard', 'generated', 'organization', 'coreConcepts']),
    );
  });

  it('publishes llms.txt from the same data', async () => {
    const text = await (await svc.app.fetch(new Request(`${BASE}/llms.txt`))).text();
    expect(text.split('\n').slice(0, 3)).toEqual(['# Proofline Test', '', '> Testing the manifest.']);
    expect(text).toContain(`(${BASE}/.well-known/ai)`);
  });

  it('documents /ai/query and answers registry queries by GET and POST, with JSON 4xx errors', async () => {
    const { body: contract } = await getJson(svc.app, '/ai/query');
    expect(contract.standard).toBe('proofline-ai-query');
    expect(contract.request.types.map((t: any) => t.type)).toEqual(['company']); // no fmcsa reader here
    expect(contract.carrierData).toMatch(/not available/);
    const get = await getJson(svc.app, '/ai/query?q=AAPL&type=company');
    expect(get.status).toBe(200);
    expect(get.body).toMatchObject({ schema: 'proofline/ai-query/v1', query: { q: 'AAPL', type: 'company' }, source: 'registry' });
    expect(get.body.results[0].identity.ticker).toBe('AAPL');
    expect(get.body.results[0].origin.leaf_hash).toMatch(/^[0-9a-f]{64}$/);
    const post = await getJson(svc.app, '/ai/query', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ q: '789019' }),
    });
    expect(post.body.results[0].identity.ticker).toBe('MSFT');
    const bad = await getJson(svc.app, '/ai/query?type=company');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, parameter: 'q' });
    const badType = await getJson(svc.app, '/ai/query?q=AAPL&type=weather');
    expect(badType).toMatchObject({ status: 400, body: { parameter: 'type' } });
    const missing = await getJson(svc.app, '/ai/query?q=ZZZZQ');
    expect(missing).toMatchObject({ status: 404, body: { ticker: 'ZZZZQ' } });
  });

  it('is found and fully verified by our own agent in process', async () => {
    const r = await discover(`${BASE}/`, inProcess(svc));
    expect(r.foundBy).toBe('well-known');
    expect(r.manifest!.hash.status).toBe('match');
    expect(r.manifest!.tier).toBe(2);
    expect(r.files.map((f) => [f.role, f.verdict?.hash.status, f.verdict?.tier])).toEqual([
      ['knowledge', 'match', 2],
      ['feed', 'match', 2],
      ['archive', 'match', 2],
      ['query', 'match', 2],
      ['pages', 'match', 2],
    ]);
    expect(r.files.filter((f) => f.role !== 'archive').every((f) => f.inArchive)).toBe(true);
    expect(r.pages.length).toBe(6);
    expect(r.pages.every((p) => p.status === 'match')).toBe(true);
    expect(r.manifest!.warnings).toEqual([]);
    expect(r.manifest!.conformance).toEqual({ valid: true, issues: [] });
    // The agent's verdict covers every file it read (knowledge, feed, archive, page manifest): all conform.
    expect(r.conformance).toEqual({ valid: true, issues: [] });
    expect(r.files.map((f) => [f.role, f.conformance?.valid])).toEqual([
      ['knowledge', true],
      ['feed', true],
      ['archive', true],
      ['query', true],
      ['pages', true],
    ]);
    expect(r.warnings).toEqual([]);
  });

  it('matches the golden manifest shape (volatile values normalised)', async () => {
    const { body } = await getJson(svc.app, '/.well-known/ai');
    body.generated = '<generated>';
    body._signature.contentHash = '<contentHash>';
    body._signature.signedAt = '<signedAt>';
    body.capabilities.mcp.available = '<true when /mcp is routed>';
    for (const a of body.applications) a.endpoints = '<routes registered by this family>';
    await expect(JSON.stringify(body, null, 2) + '\n').toMatchFileSnapshot('../golden/discovery/well-known-ai.json');
  });
});

describe('publisher: archive lineage across changes and restarts', () => {
  it('appends a superseding record when content changes, keeps it across restarts, and our agent sees a clean supersession', async () => {
    const org = (mission: string) => ({ org: { name: 'Lineage Co', domain: 'proofline.test', mission, sectors: ['testing'] } });
    const a = await service(org('First mission.'));
    const pinned = createBookmark(await discover(`${BASE}/`, inProcess(a)));
    const before = (await getJson(a.app, '/.well-known/archive')).body.archive.length;

    const b = await service(org('Second mission.')); // "restart" with changed configuration, same DATA_DIR
    const { body: archive } = await getJson(b.app, '/.well-known/archive');
    const manifestRecords = archive.archive.filter((r: any) => r.resource === '/.well-known/ai');
    const [prev, last] = manifestRecords.slice(-2);
    expect(last.supersedes).toBe(prev.versionId);
    expect(last.contentHash).toBe((await getJson(b.app, '/.well-known/ai')).body._signature.contentHash);
    expect(archive.archive.length).toBeGreaterThan(before);

    const result = await reverify(pinned, inProcess(b));
    expect(result.verdict).toBe('clean-supersession');
    expect(result.resources.find((x) => x.resource === `${BASE}/.well-known/ai`)!.verdict).toBe('clean-supersession');
    expect(result.resources.find((x) => x.resource === `${BASE}/ai/feed.json`)!.verdict).toBe('same');

    const c = await service(org('Second mission.')); // plain restart: nothing new, bytes identical
    const again = await getJson(c.app, '/.well-known/archive');
    expect(again.body.archive).toEqual(archive.archive);
    expect((await getJson(c.app, '/.well-known/ai')).headers.get('etag')).toBe(
      (await getJson(b.app, '/.well-known/ai')).headers.get('etag'),
    );
    expect((await reverify(result.bookmark, inProcess(c))).verdict).toBe('same');
  });
});

describe('publisher: tier 3 with a configured secp256k1 key', () => {
  let svc: TestService;
  let address: string;
  beforeAll(async () => {
    const key = generateSecretKey();
    address = addressFromSecretKey(key);
    const keyPath = path.join(dir, 'discovery-key.hex');
    await writeFile(keyPath, `0x${bytesToHex(key)}\n`, { mode: 0o600 });
    svc = await service({ discoveryKeyPath: keyPath });
  });

  it('signs every file with EIP-191 over the contentHash, digitalName = the key address', async () => {
    for (const [p] of FILES) {
      const { body } = await getJson(svc.app, p);
      expect(body._signature, p).toMatchObject({
        contentHash: hashOf(body),
        canonicalization: 'RFC8785',
        method: 'eip191-personal-sign-secp256k1',
        digitalName: address,
        network: 'offline',
      });
      expect(body._signature.signature).toMatch(/^0x[0-9a-f]{128}(1b|1c)$/);
      expect(Date.parse(body._signature.signedAt)).toBeGreaterThanOrEqual(Date.parse(body.generated));
    }
  });

  it('is verified with origin by our agent, in process and over a real loopback server', async () => {
    const check = (r: Awaited<ReturnType<typeof discover>>) => {
      expect(r.found).toBe(true);
      for (const v of [r.manifest!, ...r.files.map((f) => f.verdict!)]) {
        expect(v.hash.status, v.url).toBe('match');
        expect(v.tier, v.url).toBe(3);
        expect(v.signature, v.url).toMatchObject({
          status: 'verified',
          scheme: 'eip191-personal-sign',
          recovered: address,
          claimed: address,
        });
        expect(v.originVerified, v.url).toBe(true);
      }
      expect(r.pages.every((p) => p.status === 'match')).toBe(true);
    };
    check(await discover(`${BASE}/`, inProcess(svc)));

    const server = serve(svc.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
    await server.ready();
    const url = server.url!.replace(/\/$/, '');
    svc.deps.options.publicBaseUrl = url; // as startServer does once the port is known
    try {
      const r = await discover(url, { allowPrivate: true, timeoutMs: 5000 });
      expect(r.manifestUrl).toBe(`${url}/.well-known/ai`);
      check(r);
    } finally {
      svc.deps.options.publicBaseUrl = BASE;
      await server.close(true);
    }
  });
});
