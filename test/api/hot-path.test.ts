/**
 * The read API's hot path (service/platform/node-listener.ts + ApiLayer.answerFromCache),
 * the templated usage_meta and the spooled query log.
 *
 * The hot path answers cached GETs straight from the node:http listener; these
 * tests run a real server on loopback and check that a hot answer is the same
 * response as the h3 one (status, headers, body apart from the per-request
 * counters), and that metering, 304, compression, 401 and 429 behave the same.
 */
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { H3 } from 'h3';
import { createNodeListener, writeHotAnswer } from '../../service/platform/node-listener.ts';
import { HotAnswer } from '../../service/platform/hot-path.ts';
import { slabsAllocated } from '../../service/platform/bytes.ts';
import { connect } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { createApiKey } from '../../lib/api-keys.ts';
import { silentLogger } from '../../lib/log.ts';
import { startServer, type RunningServer } from '../../service/main.ts';
import { EncodedLogClient, EncodedLogRequest, QueryLog, toLine } from '../../service/platform/query-log.ts';
import { AGENT_TYPES } from '../../service/platform/agent-type.ts';
import { buildUsageMeta, dataSourceOf, usageMetaJson, type ClientIdentity, type Metered } from '../../service/platform/usage.service.ts';
import { buildTestService, ingestAll, type TestService } from '../helpers/app.ts';
import { createApp } from '../../service/app.ts';
import { CACHEABLE_PREFIXES } from '../../service/platform/response-cache.ts';
import type { LayerRequest } from '../../service/platform/response-finish.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { TOOLS } from '../../service/mcp/mcp.queries.ts';

describe('usageMetaJson', () => {
  it('is byte for byte JSON.stringify(buildUsageMeta(...)) for every tier, agent type and count', () => {
    const cases: Array<[ClientIdentity, Metered, string]> = [];
    for (const tier of ['free', 'pro'] as const) {
      for (const agent_type of AGENT_TYPES) {
        const limit = tier === 'free' ? 500 : 10_000;
        for (const n of [1, 399, 400, 500, 501, 12_345]) {
          const m: Metered = {
            requests_this_hour: n,
            hourly_limit: limit,
            remaining: Math.max(0, limit - n),
            reset_seconds: 17,
            over_limit: n > limit,
          };
          for (const base of ['http://proofline.test', 'https://api.example.com/"quoted"'])
            cases.push([{ client: 'ip:abc', tier, hourly_limit: limit, agent_type }, m, base]);
        }
      }
    }
    for (const [id, m, base] of cases) {
      for (const source of ['sec', 'fmcsa', 'care'] as const)
        expect(usageMetaJson(id, m, base, 10_000, source)).toBe(JSON.stringify(buildUsageMeta(id, m, base, 10_000, source)));
    }
  });
});

describe('dataSourceOf', () => {
  it('gives FMCSA provenance to carrier and vetting paths, care provenance to proof-of-care paths and SEC to the rest', () => {
    for (const p of [
      '/api/carrier/123',
      '/api/carriers',
      '/api/safety',
      '/api/crashes',
      '/api/inspections',
      '/api/enforcement',
      '/api/red-flags',
      '/api/fmcsa/status',
      '/api/vet',
      '/api/vet-preview',
      '/api/vetting',
      '/api/batch-vet',
    ])
      expect(dataSourceOf(p), p).toBe('fmcsa');
    for (const p of ['/api/care', '/api/care/POGC-1/event', '/api/care/POGC-1/verify']) expect(dataSourceOf(p), p).toBe('care');
    for (const p of [
      '/api/company/AAPL',
      '/api/person/cook',
      '/api/search',
      '/api/signals',
      '/api/verify/ab',
      '/api/stats',
      '/api/carrierx',
      '/api/vetted',
      '/api/careful',
    ])
      expect(dataSourceOf(p), p).toBe('sec');
  });

  it('is SEC for every hot-cached prefix (the hot path writes the SEC usage_meta parts)', () => {
    for (const p of CACHEABLE_PREFIXES) expect(dataSourceOf(p), p).toBe('sec');
  });
});

describe('QueryLog', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('proofline-qlog-');
  });
  afterAll(async () => {
    await removeDir(dir);
  });
  const entry = (i: number) => ({
    ts_ms: 1_795_000_000_000 + i,
    client: 'key:k1',
    tier: 'pro',
    agent_type: 'claudebot',
    method: 'GET',
    path: `/api/company/T${i}?q="x"\\`,
    ticker: i % 2 ? null : `T${i}`,
    status: 200,
    duration_ms: 0.25,
  });

  it('writes the same line from encoded parts (pushEncoded) as from an entry (push)', async () => {
    const log = await QueryLog.open(path.join(dir, 'e', 'query-log.duckdb'), { flushMs: 60_000, spoolMs: 60_000 });
    const e = { ...entry(7), path: '/api/person/José "q"\\', ticker: 'BRK.B', status: 404, duration_ms: 1.23456 };
    expect(toLine(e)).toBe(
      `{"ts_ms":1795000000007,"client":"key:k1","tier":"pro","agent_type":"claudebot","method":"GET","path":"/api/person/José \\"q\\"\\\\","ticker":"BRK.B","status":404,"duration_ms":1.235}\n`,
    );
    log.push(e);
    log.pushEncoded(
      e.ts_ms,
      new EncodedLogClient(e.client, e.tier, e.agent_type, e.method),
      new EncodedLogRequest(e.path, e.ticker, e.status),
      e.duration_ms,
    );
    const rows = await log.query(`SELECT DISTINCT * FROM query_log`);
    expect(rows).toEqual([
      {
        ts_ms: '1795000000007',
        client: 'key:k1',
        tier: 'pro',
        agent_type: 'claudebot',
        method: 'GET',
        path: e.path,
        ticker: 'BRK.B',
        status: 404,
        duration_ms: 1.235,
      },
    ]);
    expect(log.written).toBe(2);
    await log.close();
  });

  it('keeps every pushed row, strings intact, once flushed', async () => {
    const log = await QueryLog.open(path.join(dir, 'a', 'query-log.duckdb'), { flushMs: 60_000, spoolMs: 60_000 });
    for (let i = 0; i < 2500; i++) log.push(entry(i));
    const [r] = await log.query(`SELECT count(*)::INTEGER AS n, count(ticker)::INTEGER AS t, min(path) AS p FROM query_log`);
    expect(r).toEqual({ n: 2500, t: 1250, p: '/api/company/T0?q="x"\\' });
    expect(log.written).toBe(2500);
    await log.close();
  });

  it('keeps rows across several off-heap chunks and spool writes, non-ASCII paths intact', async () => {
    const log = await QueryLog.open(path.join(dir, 'c', 'query-log.duckdb'), { flushMs: 60_000, spoolMs: 60_000 });
    // ~250 bytes a line: 12,000 lines fill the 1 MB chunk about three times.
    const long = (i: number) => ({ ...entry(i), path: `/api/person/${'é✓'.repeat(40)}${i}` });
    for (let i = 0; i < 6000; i++) log.push(long(i));
    await log.flush();
    for (let i = 6000; i < 12000; i++) log.push(long(i));
    const [r] = await log.query(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT path)::INTEGER AS paths, (max(ts_ms) - min(ts_ms))::INTEGER AS span, min(path) FILTER (WHERE ts_ms = 1795000000007) AS p7 FROM query_log`,
    );
    expect(r).toEqual({ n: 12000, paths: 12000, span: 11999, p7: `/api/person/${'é✓'.repeat(40)}7` });
    expect(log.written).toBe(12000);
    await log.close();
  });

  it('writes its lines into the chunks it already wrote to the spool, not new ones, and every row arrives intact', async () => {
    const log = await QueryLog.open(path.join(dir, 'r', 'query-log.duckdb'), { flushMs: 60_000, spoolMs: 60_000 });
    const long = (i: number) => ({ ...entry(i), path: `/api/person/${'é✓'.repeat(40)}${i}` });
    const allocs = vi.spyOn(Buffer, 'allocUnsafe');
    try {
      // 12 spool writes of ~1.5 MB (two chunks each): 24 new 1 MB chunks without reuse.
      for (let round = 0; round < 12; round++) {
        for (let i = round * 6000; i < (round + 1) * 6000; i++) log.push(long(i));
        await log.flush();
      }
      const chunks = allocs.mock.calls.filter(([n]) => n === 1 << 20).length;
      expect(chunks).toBeLessThanOrEqual(4);
    } finally {
      allocs.mockRestore();
    }
    // A chunk reused before its bytes were written would have sent other lines (or torn ones) to the spool.
    const [r] = await log.query(
      `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE path = '/api/person/' || repeat('é✓', 40) || (ts_ms - 1795000000000)::VARCHAR)::INTEGER AS exact FROM query_log`,
    );
    expect(r).toEqual({ n: 72000, exact: 72000 });
    await log.close();
  });

  it('loads on its timer only a large batch, or rows that waited long enough; a read sees every row at once', async () => {
    // Ticks every 10 ms, spool writes every 10 ms: a load a second (the former timer) would show within a few ticks.
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    const batched = await QueryLog.open(path.join(dir, 'f', 'query-log.duckdb'), {
      flushMs: 10,
      spoolMs: 10,
      loadRows: 1000,
      loadMaxWaitMs: 3_600_000,
    });
    for (let i = 0; i < 999; i++) batched.push(entry(i));
    await new Promise((r) => setTimeout(r, 300)); // about 30 ticks with 999 rows waiting
    expect(batched.written).toBe(0); // no DuckDB load below the batch
    batched.push(entry(999));
    await until(() => batched.written === 1000);
    expect(batched.written).toBe(1000); // the timer loaded the batch, no read asked for it
    for (let i = 1000; i < 1010; i++) batched.push(entry(i));
    const [n] = await batched.query(`SELECT count(*)::INTEGER AS n FROM query_log`);
    expect(n).toEqual({ n: 1010 }); // a read flushes whatever waits
    await batched.close();

    const waited = await QueryLog.open(path.join(dir, 'g', 'query-log.duckdb'), {
      flushMs: 10,
      spoolMs: 10,
      loadRows: 1_000_000,
      loadMaxWaitMs: 50,
    });
    for (let i = 0; i < 3; i++) waited.push(entry(i));
    await until(() => waited.written === 3);
    expect(waited.written).toBe(3);
    await waited.close();
  });

  it('writes buffered rows on close, and loads a spool file a crash left behind (a torn last line is skipped)', async () => {
    const file = path.join(dir, 'b', 'query-log.duckdb');
    const first = await QueryLog.open(file, { flushMs: 60_000, spoolMs: 60_000 });
    for (let i = 0; i < 10; i++) first.push(entry(i));
    await first.close();
    // What a kill -9 between two loads leaves: an open spool file with a half-written last line.
    await mkdir(`${file}.spool`, { recursive: true });
    const line = (i: number) => JSON.stringify(entry(100 + i));
    await writeFile(path.join(`${file}.spool`, '0000000000001-000000.ndjson.open'), `${line(0)}\n${line(1)}\n${line(2).slice(0, 40)}`);
    const second = await QueryLog.open(file, { flushMs: 60_000, spoolMs: 60_000 });
    const [r] = await second.query(
      `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE ts_ms >= 1795000000100)::INTEGER AS recovered FROM query_log`,
    );
    expect(r).toEqual({ n: 12, recovered: 2 });
    await second.close();
  });
});

describe('node:http hot path (real server)', () => {
  let root: string;
  let server: RunningServer;
  let proKey: string;
  let tinyKey: string;
  /** Keys with the same limit: their first answers carry the same usage_meta (the client id is not in it). */
  const twinKeys: string[] = [];
  let svc: TestService;
  beforeAll(async () => {
    root = await tempDir('proofline-hot-');
    const inputDir = path.join(root, 'input');
    await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
    const config = testConfig(path.join(root, 'data'), { PORT: '0', HOST: '127.0.0.1', REDIS_URL: '' });
    await ingestAll(config, [registryPipeline], inputDir);
    proKey = (await createApiKey(config.dataDir, { label: 'hot', hourlyLimit: 1000 })).secret;
    tinyKey = (await createApiKey(config.dataDir, { label: 'tiny', hourlyLimit: 3 })).secret;
    for (let i = 0; i < 10; i++) twinKeys.push((await createApiKey(config.dataDir, { label: `twin-${i}`, hourlyLimit: 777 })).secret);
    server = await startServer(config, silentLogger);
    svc = await buildTestService(config, ['registry']);
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await svc?.deps.usage?.close();
    await svc?.close();
    await removeDir(root);
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const json = (r: Response): Promise<any> => r.json();
  const get = (p: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${proKey}`, ...headers } });
  /** Headers minus the ones that differ per request or per transport. */
  const stable = (h: Headers) =>
    Object.fromEntries(
      [...h].filter(
        ([k]) =>
          ![
            'date',
            'ratelimit-remaining',
            'ratelimit-reset',
            'x-proofline-cache',
            'keep-alive',
            'connection',
            'content-length',
            'transfer-encoding',
          ].includes(k),
      ),
    );
  const withoutCounters = (b: { usage_meta: Record<string, unknown> }) => ({
    ...b,
    usage_meta: { ...b.usage_meta, requests_this_hour: 0, remaining: 0 },
  });

  it('answers a cached GET with the same status, headers and body as h3 did, and counts it', async () => {
    const miss = await get('/api/company/AAPL');
    const hit = await get('/api/company/AAPL');
    expect([miss.status, hit.status]).toEqual([200, 200]);
    expect([miss.headers.get('x-proofline-cache'), hit.headers.get('x-proofline-cache')]).toEqual(['miss', 'hit']);
    expect(stable(hit.headers)).toEqual(stable(miss.headers));
    const [a, b] = [await json(miss), await json(hit)];
    expect(b.usage_meta.requests_this_hour).toBe(a.usage_meta.requests_this_hour + 1);
    expect(withoutCounters(b)).toEqual(withoutCounters(a));
  });

  it('answers a cached page with its Link rel="next" header, as h3 did', async () => {
    const miss = await get('/api/search?q=a&limit=1');
    const hit = await get('/api/search?q=a&limit=1');
    expect([miss.headers.get('x-proofline-cache'), hit.headers.get('x-proofline-cache')]).toEqual(['miss', 'hit']);
    const next = (await json(miss)).next as string;
    expect(next).toMatch(/cursor=/);
    expect(miss.headers.get('link')).toBe(`<${next}>; rel="next"`);
    expect(stable(hit.headers)).toEqual(stable(miss.headers));
    expect((await json(hit)).next).toBe(next);
  });

  it('answers 304 to a matching If-None-Match and compresses by Accept-Encoding', async () => {
    const first = await get('/api/company/MSFT');
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const notModified = await get('/api/company/MSFT', { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('x-proofline-cache')).toBe('hit');
    const raw = await fetch(`${server.url}/api/company/MSFT`, {
      headers: { authorization: `Bearer ${proKey}`, 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit);
    // undici decompresses transparently; what matters is the negotiated encoding and a valid JSON body.
    expect(raw.headers.get('content-encoding')).toBe('gzip');
    expect(raw.headers.get('vary')).toBe('Authorization, Accept-Encoding');
    const buf = Buffer.from(await raw.arrayBuffer());
    const text = buf[0] === 0x1f && buf[1] === 0x8b ? gunzipSync(buf).toString('utf8') : buf.toString('utf8');
    expect((JSON.parse(text) as { identity: { ticker: string } }).identity.ticker).toBe('MSFT');
  });

  it('rejects an unknown key with 401 and answers 429 past the limit on cached paths too', async () => {
    await (await get('/api/company/AAPL')).arrayBuffer();
    const bad = await get('/api/company/AAPL', { authorization: 'Bearer not-a-key' });
    expect(bad.status).toBe(401);
    expect((await json(bad)).error).toMatch(/invalid or revoked API key/);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await get('/api/company/AAPL', { authorization: `Bearer ${tinyKey}` });
      statuses.push(r.status);
      if (r.status === 429) {
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await json(r)).usage_meta.remaining).toBe(0);
      } else await r.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('leaves other spellings, HEAD and uncached paths to h3', async () => {
    await (await get('/api/company/AAPL')).arrayBuffer();
    const encoded = await get('/api/company/%41APL');
    expect(encoded.status).toBe(200);
    expect((await json(encoded)).identity.ticker).toBe('AAPL');
    const head = await fetch(`${server.url}/api/company/AAPL`, { method: 'HEAD', headers: { authorization: `Bearer ${proKey}` } });
    expect(head.status).toBe(200);
    const missing = await get('/api/company/NOSUCHTICKER');
    expect(missing.status).toBe(404);
    expect((await json(missing)).error).toBeTruthy();
  });

  it('assembles a hit as bytes with the same headers and body as the text form of the same answer', async () => {
    const layer = svc.deps.apiLayer!;
    const request = (pathname: string, search: string, headers: Record<string, string>): LayerRequest => ({
      method: 'GET',
      pathname,
      search,
      target: pathname + search,
      ip: '127.0.0.1',
      header: (name) => headers[name],
    });
    const ua = 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
    let twin = 0;
    for (const [pathname, search] of [
      ['/api/company/AAPL', ''],
      ['/api/company/NOSUCHTICKR', ''],
      ['/api/search', '?q=apple'],
      ['/api/search', '?q=a&limit=1'], // a page with a next page: its Link header is kept with the body
      ['/api/company/MSFT/filings', '?form=10-K'],
    ] as const) {
      const miss = await svc.app.fetch(
        new Request(`http://proofline.test${pathname}${search}`, { headers: { authorization: `Bearer ${proKey}` } }),
      );
      expect(miss.headers.get('x-proofline-cache')).toBe('miss');
      await miss.arrayBuffer();
      const asBytes = (await layer.answerFromCache(
        request(pathname, search, { authorization: `Bearer ${twinKeys[twin++]}`, 'user-agent': ua }),
      ))!;
      const asText = (await layer.answerFromCache(
        request(pathname, search, { authorization: `Bearer ${twinKeys[twin++]}`, 'user-agent': ua, 'accept-encoding': 'identity' }),
      ))!;
      expect(asBytes.body).toBeInstanceOf(Uint8Array);
      expect(typeof asText.body).toBe('string');
      expect(Buffer.from(asBytes.body as Uint8Array).toString('utf8')).toBe(asText.body);
      expect(Object.entries(asBytes.headers)).toEqual(Object.entries(asText.headers));
      expect(Number(asBytes.headers['content-length'])).toBe((asBytes.body as Uint8Array).byteLength);
      expect(asBytes.status).toBe(asText.status);
      expect(JSON.parse(asText.body as string).usage_meta).toMatchObject({
        requests_this_hour: 1,
        hourly_limit: 777,
        remaining: 776,
        agent_type: 'claudebot',
      });
    }
  });

  it('answers pipelined hot requests on one connection in order, each complete, and closes after Connection: close', async () => {
    for (const t of ['AAPL', 'MSFT']) await (await get(`/api/company/${t}`)).arrayBuffer();
    const { port } = new URL(server.url);
    const req = (t: string, extra = '') => `GET /api/company/${t} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${proKey}\r\n${extra}\r\n`;
    const text = await new Promise<string>((resolve, reject) => {
      let data = '';
      const sock = connect(Number(port), '127.0.0.1', () => sock.write(req('AAPL') + req('MSFT') + req('AAPL', 'Connection: close\r\n')));
      sock.on('data', (d: Buffer) => (data += d.toString('latin1')));
      sock.on('close', () => resolve(data)); // the server closes after the third answer
      sock.on('error', reject);
    });
    const answers: Array<{ head: string; body: string }> = [];
    for (let rest = text; rest.length > 0; ) {
      const end = rest.indexOf('\r\n\r\n');
      const head = rest.slice(0, end);
      const len = Number(/\r\ncontent-length: (\d+)/i.exec(head)![1]);
      answers.push({ head, body: rest.slice(end + 4, end + 4 + len) });
      rest = rest.slice(end + 4 + len);
    }
    expect(answers.map((a) => JSON.parse(a.body).identity.ticker)).toEqual(['AAPL', 'MSFT', 'AAPL']);
    expect(answers.map((a) => /\r\nx-proofline-cache: (\w+)/.exec(a.head)![1])).toEqual(['hit', 'hit', 'hit']);
    expect(answers.map((a) => /\r\nConnection: ([\w-]+)/.exec(a.head)![1])).toEqual(['keep-alive', 'keep-alive', 'close']);
  });

  it('writes a hot answer as one buffer whose bytes are those of writeHead + end (Date apart), in one socket write', async () => {
    const layer = svc.deps.apiLayer!;
    const ua = 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
    const request = (target: string, key: string): LayerRequest => {
      const q = target.indexOf('?');
      return {
        method: 'GET',
        pathname: q < 0 ? target : target.slice(0, q),
        search: q < 0 ? '' : target.slice(q),
        target,
        ip: '127.0.0.1',
        header: (name) => ({ authorization: `Bearer ${key}`, 'user-agent': ua })[name as 'authorization'],
      };
    };
    // Two plain node:http servers write the same answer: one with writeHotAnswer, one with writeHead + end.
    let answer: HotAnswer | null = null;
    let fastWrites = -1;
    const dataWrites = (res: import('node:http').ServerResponse): (() => number) => {
      const sock = res.socket!;
      const write = sock.write;
      let n = 0;
      sock.write = function (this: typeof sock, chunk: unknown, ...rest: unknown[]) {
        if ((chunk as { length: number }).length > 0) n++;
        return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
      } as typeof sock.write;
      res.once('finish', () => (sock.write = write));
      return () => n;
    };
    const fast = createServer((_req, res) => {
      const count = dataWrites(res);
      expect(writeHotAnswer(res, answer!)).toBe(true);
      fastWrites = count();
    });
    const plain = createServer((_req, res) => {
      res.writeHead(answer!.status, answer!.headers);
      res.end(answer!.body);
    });
    await Promise.all([fast, plain].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
    const raw = (srv: typeof fast) =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        const sock = connect((srv.address() as { port: number }).port, '127.0.0.1', () => sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
        sock.on('data', (d: Buffer) => {
          chunks.push(d);
          const all = Buffer.concat(chunks);
          const end = all.indexOf('\r\n\r\n');
          const len = /content-length: (\d+)/.exec(all.toString('latin1'));
          if (end > 0 && len && all.length >= end + 4 + Number(len[1])) {
            sock.destroy();
            resolve(all.toString('latin1').replace(/\r\nDate: [^\r]+/, '\r\nDate: -'));
          }
        });
        sock.on('error', reject);
      });
    try {
      let twin = 0;
      for (const target of ['/api/company/AAPL', '/api/company/NOSUCHHOTWIRE', '/api/search?q=a&limit=1']) {
        await (await get(target)).arrayBuffer(); // cached (hot in svc's own cache below)
        await (
          await svc.app.fetch(new Request(`http://proofline.test${target}`, { headers: { authorization: `Bearer ${proKey}` } }))
        ).arrayBuffer();
        const a = await layer.answerFromCache(request(target, twinKeys[twin++ % twinKeys.length]!));
        expect(a).toBeInstanceOf(HotAnswer);
        answer = a as HotAnswer;
        const [viaWire, viaWriteHead] = [await raw(fast), await raw(plain)];
        expect(viaWire).toBe(viaWriteHead);
        expect(viaWire).toMatch(/^HTTP\/1\.1 (200 OK|404 Not Found)\r\n/);
        // The regression guard: one socket write carries status line, headers and body (writeHead + end: two).
        expect(fastWrites).toBe(1);
      }
      expect(twin).toBe(3);
    } finally {
      await Promise.all([fast, plain].map((s) => new Promise((resolve) => s.close(resolve))));
    }
  });

  it('reuses the bytes of hot answers already written to the kernel: 1,500 answers, no new slab, every body intact', async () => {
    const key = (await createApiKey(path.join(root, 'data'), { label: 'slab', hourlyLimit: 1_000_000 })).secret;
    // node:http on one kept-alive connection, no Accept-Encoding: the byte path that writeHotAnswer writes.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const u = new URL(server.url);
    const hot = (i: number) =>
      new Promise<{ cache: string | undefined; body: string }>((resolve, reject) => {
        const r = httpRequest(
          {
            host: u.hostname,
            port: u.port,
            // Not AAPL: the query log test below reads the last AAPL row, which must stay that of a hot answer.
            path: `/api/company/${i % 2 ? 'NVDA' : 'MSFT'}`,
            agent,
            headers: { authorization: `Bearer ${key}` },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ cache: res.headers['x-proofline-cache'] as string | undefined, body: Buffer.concat(chunks).toString() }),
            );
          },
        );
        r.on('error', reject);
        r.end();
      });
    try {
      const first = [JSON.parse((await hot(0)).body), JSON.parse((await hot(1)).body)];
      const slabs = slabsAllocated;
      for (let i = 2; i < 1502; i++) {
        const r = await hot(i);
        expect(r.cache).toBe('hit');
        const b = JSON.parse(r.body);
        // The same answer apart from the counters, which grow by one a request: no byte of a reused buffer went out twice.
        expect(b.usage_meta.requests_this_hour).toBe(i + 1);
        const was = first[i % 2];
        expect({ ...b, usage_meta: { ...b.usage_meta, requests_this_hour: 0, remaining: 0 } }).toEqual({
          ...was,
          usage_meta: { ...was.usage_meta, requests_this_hour: 0, remaining: 0 },
        });
      }
      // ~2.5 KB an answer: without reuse, 1,500 answers fill about 15 slabs of 256 KB.
      expect(slabsAllocated - slabs).toBeLessThanOrEqual(1);
    } finally {
      agent.destroy();
    }
  });

  it('reuses the bytes of MCP answers already written to the kernel: no new slab or large buffer per answer, every body intact', async () => {
    const key = (await createApiKey(path.join(root, 'data'), { label: 'mcp-slab', hourlyLimit: 1_000_000 })).secret;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const u = new URL(server.url);
    // The tool call of request i: small answers first, then large ones (below).
    let tool = (i: number): { name: string; arguments: Record<string, unknown> } => ({
      name: 'sec_company',
      arguments: { ticker: i % 2 ? 'NVDA' : 'MSFT' },
    });
    const call = (i: number) =>
      new Promise<string>((resolve, reject) => {
        const r = httpRequest(
          {
            host: u.hostname,
            port: u.port,
            path: '/mcp',
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(Buffer.concat(chunks).toString()));
          },
        );
        r.on('error', reject);
        r.end(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: tool(i) }));
      });
    // An answer with its usage counters zeroed: what must stay the same from call to call.
    const stable = (text: string) => {
      const a = JSON.parse(text);
      const { _meta, ...result } = a.result;
      expect(_meta['proofline/usage']).toBeTruthy();
      return { ...a, id: 0, result };
    };
    try {
      const first = [stable(await call(0)), stable(await call(1))];
      expect(first[0].result.structuredContent.identity.ticker).toBe('MSFT');
      const slabs = slabsAllocated;
      for (let i = 2; i < 602; i++) expect(stable(await call(i))).toEqual(first[i % 2]);
      // ~2 KB an answer: without the hand-back, 600 answers fill about 5 slabs of 256 KB.
      expect(slabsAllocated - slabs).toBeLessThanOrEqual(1);

      // Answers over 1/8 of a slab: each takes the buffer the previous one handed back, not a new buffer.
      tool = (i) => ({ name: 'sec_filings', arguments: { ticker: i % 2 ? 'NVDA' : 'MSFT', limit: 1000 } });
      const big = [await call(0), await call(1)];
      expect(Math.min(...big.map((b) => Buffer.byteLength(b)))).toBeGreaterThan(32 * 1024);
      const bigFirst = big.map(stable);
      const buffers = vi.spyOn(Buffer, 'allocUnsafeSlow');
      try {
        for (let i = 2; i < 202; i++) expect(stable(await call(i))).toEqual(bigFirst[i % 2]);
        expect(buffers.mock.calls.filter(([n]) => n > 32 * 1024).length).toBeLessThanOrEqual(1);
      } finally {
        buffers.mockRestore();
      }
    } finally {
      agent.destroy();
    }
  });

  it('logs a hot answer like any other: client, path, ticker, status', async () => {
    const usage = svc.deps.usage!;
    const rows = await usage.queryLog.query(
      `SELECT client, tier, agent_type, method, path, ticker, status FROM query_log WHERE path = '/api/company/AAPL' AND client <> $c ORDER BY ts_ms`,
      { c: 'x' },
    );
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.at(-1)).toMatchObject({
      tier: 'pro',
      agent_type: 'claudebot',
      method: 'GET',
      path: '/api/company/AAPL',
      ticker: 'AAPL',
      status: 200,
    });
    expect(new Set(rows.map((r) => r.client)).size).toBeGreaterThanOrEqual(2);
  });

  it('logs a hot answer at the time of logging, also when its metering waited (Redis)', async () => {
    const ask = (app: H3) =>
      app.fetch(new Request('http://proofline.test/api/company/MSFT', { headers: { 'user-agent': 'ClaudeBot/1.0' } }));
    await ask(svc.app); // the usage service exists and the answer is cached
    const usage = svc.deps.usage!;
    const T = Date.now() + 3_600_000;
    let ticks = 0;
    let last = 0;
    const app = createApp({ ...svc.deps, now: () => new Date((last = T + 1000 * ++ticks)) });
    const meter = usage.meter.bind(usage);
    const push = usage.queryLog.pushEncoded.bind(usage.queryLog);
    const metered: number[] = [];
    const logged: Array<[number, number]> = [];
    // Metering that answers later, as Redis does; the clock reads once more meanwhile.
    usage.meter = (id, nowMs, cls) => {
      metered.push(nowMs);
      return Promise.resolve(meter(id, nowMs, cls));
    };
    usage.queryLog.pushEncoded = (ts, client, request, ms) => {
      logged.push([ts, last]);
      push(ts, client, request, ms);
    };
    try {
      const r = await ask(app);
      expect(r.headers.get('x-proofline-cache')).toBe('hit');
    } finally {
      usage.meter = meter;
      usage.queryLog.pushEncoded = push;
    }
    expect(logged).toHaveLength(1);
    expect(logged[0]![0]).toBe(logged[0]![1]); // the clock's latest reading
    expect(logged[0]![0]).toBeGreaterThan(metered[0]!); // not the metering's
  });

  it('writes answers that went through h3 with the standard reason phrase, and streams other responses (MCP) with srvx', async () => {
    const raw = (p: string, method = 'GET', headers: Record<string, string> = {}) =>
      new Promise<{ statusLine: string; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
        const u = new URL(p, server.url);
        const r = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ statusLine: `${res.statusCode} ${res.statusMessage}`, headers: res.headers, body }));
        });
        r.on('error', reject);
        r.end();
      });
    const miss = await raw('/api/company/GOOGL', 'GET', { authorization: `Bearer ${proKey}` });
    expect([miss.statusLine, miss.headers['x-proofline-cache']]).toEqual(['200 OK', 'miss']);
    expect(Number(miss.headers['content-length'])).toBe(Buffer.byteLength(miss.body));
    const hit = await raw('/api/company/GOOGL', 'GET', { authorization: `Bearer ${proKey}` });
    expect([hit.statusLine, hit.headers['x-proofline-cache']]).toEqual(['200 OK', 'hit']);
    expect(Number(hit.headers['content-length'])).toBe(Buffer.byteLength(hit.body));
    expect((await raw('/api/nope')).statusLine).toBe('404 Not Found');
    const head = await raw('/api/company/GOOGL', 'HEAD', { authorization: `Bearer ${proKey}` });
    expect([head.statusLine, head.body, head.headers['content-length']]).toEqual(['200 OK', '', miss.headers['content-length']]);
    const preflight = await raw('/api/company/GOOGL', 'OPTIONS', {
      origin: 'https://agent.example',
      'access-control-request-method': 'GET',
    });
    expect([preflight.statusLine, preflight.headers['access-control-allow-origin']]).toEqual(['204 No Content', '*']);
    const manifest = await raw('/.well-known/ai');
    expect(manifest.statusLine).toMatch(/^200 /);
    expect(JSON.parse(manifest.body)).toBeTruthy();

    const client = new Client({ name: 'proofline-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    try {
      expect((await client.listTools()).tools.length).toBe(TOOLS.length);
    } finally {
      await client.close();
    }
  });

  it('caches a snapshot-determined 404 too: the same body, no ETag, still metered', async () => {
    const first = await get('/api/company/NOSUCHTICKR');
    const again = await get('/api/company/NOSUCHTICKR');
    expect([first.status, again.status]).toEqual([404, 404]);
    expect([first.headers.get('x-proofline-cache'), again.headers.get('x-proofline-cache')]).toEqual(['miss', 'hit']);
    expect(again.headers.get('etag')).toBeNull();
    const [a, b] = [await json(first), await json(again)];
    expect(b.usage_meta.requests_this_hour).toBe(a.usage_meta.requests_this_hour + 1);
    expect(withoutCounters(b)).toEqual(withoutCounters(a));
    expect(a).toMatchObject({ status: 404, ticker: 'NOSUCHTICKR' });
  });
});

describe('createNodeListener', () => {
  it('answers 503 with Retry-After when the app throws, synchronously or not, and keeps serving', async () => {
    let calls = 0;
    const app = {
      fetch: () =>
        ++calls % 2
          ? (() => {
              throw new Error('sync boom');
            })()
          : Promise.reject(new Error('async boom')),
    } as unknown as H3;
    const server = createServer(createNodeListener(app, undefined, silentLogger));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/.well-known/ai`;
      for (let i = 0; i < 2; i++) {
        const r = await fetch(url);
        expect([r.status, r.headers.get('retry-after')]).toEqual([503, '1']);
        expect(await r.json()).toMatchObject({ status: 503 });
      }
      expect(calls).toBe(2);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('QueryLog when its folder disappears', () => {
  it('drops the rows with a warning instead of crashing the process', async () => {
    const dir = await tempDir('proofline-qlog-gone-');
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (_o: unknown, msg?: string) => void warnings.push(String(msg)) } as unknown as typeof silentLogger;
    const q = await QueryLog.open(path.join(dir, 'state', 'query-log.duckdb'), { flushMs: 60_000, spoolMs: 60_000, log });
    await removeDir(path.join(dir, 'state', 'query-log.duckdb.spool'));
    q.push({
      ts_ms: 1,
      client: 'ip:x',
      tier: 'free',
      agent_type: 'script',
      method: 'GET',
      path: '/api/x',
      ticker: null,
      status: 200,
      duration_ms: 1,
    });
    await q.flush();
    expect(warnings.some((w) => /spool write failed/.test(w))).toBe(true);
    await q.close();
    await removeDir(dir);
  });
});
