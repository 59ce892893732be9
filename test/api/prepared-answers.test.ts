/**
 * Answers finished from bytes prepared once (issue 22): the Redoc bundle, the discovery files (`/.well-known/archive`
 * is 768 KB at full scale) and the readiness answer are layer answers that the node listener writes with one `end`
 * (service/platform/node-listener.ts), not web Responses streamed in chunks. On a real server on loopback each
 * answer has the status, headers and bytes it had, with its length given instead of chunked framing.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { servesCarrierQueries } from '../../service/discovery/ai-query.queries.ts';
import { PATHS } from '../../service/discovery/discovery.documents.ts';
import { DiscoveryPublisher } from '../../service/discovery/discovery.publisher.ts';
import { getReadiness } from '../../service/health/health.queries.ts';
import { createNodeListener } from '../../service/platform/node-listener.ts';
import { buildTestService, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

describe('answers finished from prepared bytes (real server)', () => {
  let root: string;
  let svc: TestService;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    root = await tempDir('proofline-prepared-');
    svc = await buildTestService(testConfig(path.join(root, 'data')), []);
    server = createServer(createNodeListener(svc.app, svc.deps.apiLayer, silentLogger));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await svc?.deps.usage?.close();
    await svc?.close();
    await removeDir(root);
  });

  /** Status, headers (without the per-request and connection ones) and body bytes, as a client receives them. */
  const wire = async (p: string, headers: Record<string, string> = {}) => {
    const r = await fetch(`${url}${p}`, { headers });
    const bytes = Buffer.from(await r.arrayBuffer());
    const h = Object.fromEntries([...r.headers].filter(([k]) => !['date', 'connection', 'keep-alive'].includes(k)));
    return { status: r.status, headers: h, bytes };
  };

  it('serves the Redoc bundle as the bytes read from node_modules, with its length', async () => {
    const file = await readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
    for (let i = 0; i < 2; i++) {
      const a = await wire('/docs/redoc.standalone.js');
      expect(a.status).toBe(200);
      expect(a.headers).toEqual({
        'content-type': 'application/javascript; charset=utf-8',
        'cache-control': 'public, max-age=86400',
        'content-length': String(file.byteLength),
      });
      expect(a.bytes.equals(file)).toBe(true);
    }
  });

  it("serves each discovery file as its text's UTF-8 bytes, with its ETag, CORS headers and length; 304 on a match", async () => {
    // A second publisher over the same deps and persisted state builds the same set (discovery.publisher.ts).
    const publisher = new DiscoveryPublisher(svc.deps, svc.app, servesCarrierQueries(svc.deps));
    for (const p of [PATHS.manifest, PATHS.knowledge, PATHS.feed, PATHS.archive, PATHS.pages, PATHS.query, PATHS.llms, PATHS.schema]) {
      const a = await wire(p);
      const f = (await publisher.file(p))!;
      expect(a.status, p).toBe(200);
      expect(a.bytes.toString('utf8'), p).toBe(Buffer.from(f.bytes).toString('utf8'));
      expect(a.headers, p).toEqual({
        'content-type': f.contentType,
        'cache-control': `public, max-age=${f.cacheSeconds}`,
        etag: f.etag,
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'ETag, Link',
        'content-length': String(f.bytes.byteLength),
      });
      const again = await wire(p, { 'if-none-match': f.etag });
      expect(again.status, p).toBe(304);
      expect(again.bytes.byteLength, p).toBe(0);
    }
    // The home page is HTML: it keeps the ai-discovery Link header the global middleware adds.
    const home = await wire(PATHS.home);
    const f = (await publisher.file(PATHS.home))!;
    expect(home.bytes.toString('utf8')).toBe(Buffer.from(f.bytes).toString('utf8'));
    expect(home.headers.link).toContain('rel="ai-discovery"');
    expect(home.headers.etag).toBe(f.etag);
  });

  it('answers readiness with the JSON of getReadiness, its status and headers', async () => {
    const expected = await getReadiness(svc.deps);
    const a = await wire('/api/ready');
    const text = JSON.stringify(expected);
    expect(a.status).toBe(expected.ready ? 200 : 503);
    expect(a.bytes.toString('utf8')).toBe(text);
    expect(a.headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...(expected.ready ? {} : { 'retry-after': '5' }),
      'content-length': String(Buffer.byteLength(text)),
    });
  });
});
