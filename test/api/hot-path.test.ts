/**
 * The read API's hot path (service/node-listener.ts + ApiLayer.answerFromCache),
 * the templated usage_meta and the spooled query log.
 *
 * The hot path answers cached GETs straight from the node:http listener; these
 * tests run a real server on loopback and check that a hot answer is the same
 * response as the h3 one (status, headers, body apart from the per-request
 * counters), and that metering, 304, compression, 401 and 429 behave the same.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { createApiKey } from '../../lib/api-keys.ts';
import { silentLogger } from '../../lib/log.ts';
import { startServer, type RunningServer } from '../../service/main.ts';
import { QueryLog } from '../../service/usage/query-log.ts';
import { AGENT_TYPES } from '../../service/usage/agent-type.ts';
import { buildUsageMeta, usageMetaJson, type ClientIdentity, type Metered } from '../../service/usage/usage.service.ts';
import { ingestAll } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

describe('usageMetaJson', () => {
  it('is byte for byte JSON.stringify(buildUsageMeta(...)) for every tier, agent type and count', () => {
    const cases: Array<[ClientIdentity, Metered, string]> = [];
    for (const tier of ['free', 'pro'] as const) {
      for (const agent_type of AGENT_TYPES) {
        const limit = tier === 'free' ? 500 : 10_000;
        for (const n of [1, 399, 400, 500, 501, 12_345]) {
          const m: Metered = { requests_this_hour: n, hourly_limit: limit, remaining: Math.max(0, limit - n), reset_seconds: 17, over_limit: n > limit };
          for (const base of ['http://proofline.test', 'https://api.example.com/"quoted"']) cases.push([{ client: 'ip:abc', tier, hourly_limit: limit, agent_type }, m, base]);
        }
      }
    }
    for (const [id, m, base] of cases) expect(usageMetaJson(id, m, base, 10_000)).toBe(JSON.stringify(buildUsageMeta(id, m, base, 10_000)));
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
  const entry = (i: number) => ({ ts_ms: 1_795_000_000_000 + i, client: 'key:k1', tier: 'pro', agent_type: 'claudebot', method: 'GET', path: `/api/company/T${i}?q="x"\\`, ticker: i % 2 ? null : `T${i}`, status: 200, duration_ms: 0.25 });

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
    const [r] = await log.query(`SELECT count(*)::INTEGER AS n, count(DISTINCT path)::INTEGER AS paths, (max(ts_ms) - min(ts_ms))::INTEGER AS span, min(path) FILTER (WHERE ts_ms = 1795000000007) AS p7 FROM query_log`);
    expect(r).toEqual({ n: 12000, paths: 12000, span: 11999, p7: `/api/person/${'é✓'.repeat(40)}7` });
    expect(log.written).toBe(12000);
    await log.close();
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
    const [r] = await second.query(`SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE ts_ms >= 1795000000100)::INTEGER AS recovered FROM query_log`);
    expect(r).toEqual({ n: 12, recovered: 2 });
    await second.close();
  });
});

describe('node:http hot path (real server)', () => {
  let root: string;
  let server: RunningServer;
  let proKey: string;
  let tinyKey: string;
  beforeAll(async () => {
    root = await tempDir('proofline-hot-');
    const inputDir = path.join(root, 'input');
    await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
    const config = testConfig(path.join(root, 'data'), { PORT: '0', HOST: '127.0.0.1', REDIS_URL: '' });
    await ingestAll(config, [registryPipeline], inputDir);
    proKey = (await createApiKey(config.dataDir, { label: 'hot', hourlyLimit: 1000 })).secret;
    tinyKey = (await createApiKey(config.dataDir, { label: 'tiny', hourlyLimit: 3 })).secret;
    server = await startServer(config, silentLogger);
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await removeDir(root);
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const json = (r: Response): Promise<any> => r.json();
  const get = (p: string, headers: Record<string, string> = {}) => fetch(`${server.url}${p}`, { headers: { authorization: `Bearer ${proKey}`, ...headers } });
  /** Headers minus the ones that differ per request or per transport. */
  const stable = (h: Headers) => Object.fromEntries([...h].filter(([k]) => !['date', 'ratelimit-remaining', 'ratelimit-reset', 'x-proofline-cache', 'keep-alive', 'connection', 'content-length', 'transfer-encoding'].includes(k)));
  const withoutCounters = (b: { usage_meta: Record<string, unknown> }) => ({ ...b, usage_meta: { ...b.usage_meta, requests_this_hour: 0, remaining: 0 } });

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

  it('answers 304 to a matching If-None-Match and compresses by Accept-Encoding', async () => {
    const first = await get('/api/company/MSFT');
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const notModified = await get('/api/company/MSFT', { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('x-proofline-cache')).toBe('hit');
    const raw = await fetch(`${server.url}/api/company/MSFT`, { headers: { authorization: `Bearer ${proKey}`, 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
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

describe('QueryLog when its folder disappears', () => {
  it('drops the rows with a warning instead of crashing the process', async () => {
    const dir = await tempDir('proofline-qlog-gone-');
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (_o: unknown, msg?: string) => void warnings.push(String(msg)) } as unknown as typeof silentLogger;
    const q = await QueryLog.open(path.join(dir, 'state', 'query-log.duckdb'), { flushMs: 60_000, spoolMs: 60_000, log });
    await removeDir(path.join(dir, 'state', 'query-log.duckdb.spool'));
    q.push({ ts_ms: 1, client: 'ip:x', tier: 'free', agent_type: 'script', method: 'GET', path: '/api/x', ticker: null, status: 200, duration_ms: 1 });
    await q.flush();
    expect(warnings.some((w) => /spool write failed/.test(w))).toBe(true);
    await q.close();
    await removeDir(dir);
  });
});
