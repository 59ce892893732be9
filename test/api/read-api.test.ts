/**
 * The read API's cross-cutting layer on the small sample, in process:
 * usage metering and limits, hot cache, ETag/304, compression, CORS,
 * receipts, search, stats, rankings, health, OpenAPI.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { createApiKey, revokeApiKey } from '../../lib/api-keys.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { createApp } from '../../service/app.ts';
import { extractReceipts, hashReceipt, verifyReceiptChain, type PublicJwk, type Receipt } from '../../service/receipts/receipt-chain.ts';
import { UsageService } from '../../service/platform/usage.service.ts';
import { companyIndex } from '../../service/search/company-index.ts';
import { textIndexes } from '../../service/search/text-index.ts';
import { buildTestService, clockPast, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { renderDocsPage } from '../../service/openapi/docs-page.ts';
import { renderRulesPage } from '../../service/openapi/rules-page.ts';
import { COMPRESS_MIN_BYTES, layerResponseOf } from '../../service/platform/response-finish.ts';
import { DEFAULT_FREE_HOURLY_LIMIT, DEFAULT_PRO_HOURLY_LIMIT } from '../../service/platform/usage.service.ts';
import { REPO_ROOT } from '../helpers/shared.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

const GPT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDE_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

let root: string;
let svc: TestService;
const ua = (s: string) => ({ headers: { 'user-agent': s } });

beforeAll(async () => {
  root = await tempDir();
  const inputDir = path.join(root, 'input');
  await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
  const config = testConfig(path.join(root, 'data'));
  await ingestAll(config, [registryPipeline], inputDir);
  svc = await buildTestService(config, ['registry']);
}, 300_000);
afterAll(async () => {
  await svc.deps.usage?.close();
  await svc.close();
  await removeDir(root);
});

describe('usage metering', () => {
  it('merges usage_meta into every /api JSON body and sets RateLimit headers', async () => {
    const { status, body, headers } = await getJson(svc.app, '/api/company/AAPL', ua(GPT));
    expect(status).toBe(200);
    expect(body.identity.ticker).toBe('AAPL');
    expect(Object.keys(body.usage_meta).sort()).toEqual(
      [
        'agent_type',
        'commercial_use_notice',
        'current_tier',
        'hourly_limit',
        'license',
        'license_notice',
        'pricing',
        'remaining',
        'requests_this_hour',
        'source',
        'tier_recommendation',
        'trust_status',
        'upsell',
        'validation_required_for_commercial_use',
      ].sort(),
    );
    expect(body.usage_meta).toMatchObject({
      current_tier: 'free',
      hourly_limit: 500,
      agent_type: 'gptbot',
      validation_required_for_commercial_use: true,
    });
    expect(body.usage_meta.trust_status).toMatch(/accession number on the SEC/);
    expect(headers.get('ratelimit-limit')).toBe('500');
    expect(Number(headers.get('ratelimit-remaining'))).toBe(body.usage_meta.remaining);
    expect(Number(headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    expect(headers.get('ratelimit-policy')).toBe('500;w=3600');
    expect(body.origin.leaf_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyLeaf((await getJson(svc.app, '/api/company/AAPL?detail=full')).body.origin)).toBe(true);
  });
  it('counts requests per client within the hour', async () => {
    const a = (await getJson(svc.app, '/api/stats', { headers: { 'x-forwarded-for': '1.1.1.1' } })).body.usage_meta.requests_this_hour;
    const b = (await getJson(svc.app, '/api/stats')).body.usage_meta.requests_this_hour;
    expect(b).toBe(a + 1);
  });
  it('classifies the user agent', async () => {
    for (const [agent, type] of [
      [CLAUDE_USER, 'claude_user'],
      [CHROME, 'browser'],
      ['curl/8.5.0', 'script'],
      ['Mozilla/5.0 (compatible; PerplexityBot/1.0)', 'perplexitybot'],
      ['Mozilla/5.0 (compatible; Googlebot/2.1)', 'other_bot'],
    ]) {
      expect((await getJson(svc.app, '/api/stats', ua(agent!))).body.usage_meta.agent_type).toBe(type);
    }
  });
  it('gives a Pro key its higher limit and rejects a revoked key with 401', async () => {
    const { secret, record } = await createApiKey(svc.config.dataDir, { label: 'test', hourlyLimit: 20_000 });
    await svc.deps.usage!.keys.load();
    const ok = await getJson(svc.app, '/api/company/NVDA', { headers: { authorization: `Bearer ${secret}` } });
    expect(ok.status).toBe(200);
    expect(ok.body.usage_meta).toMatchObject({ current_tier: 'pro', hourly_limit: 20_000, requests_this_hour: 1 });
    expect(ok.body.usage_meta.upsell).toMatch(/^Pro key: 20000 requests per hour/);
    await revokeApiKey(svc.config.dataDir, record.key_id);
    await svc.deps.usage!.keys.load();
    const bad = await getJson(svc.app, '/api/company/NVDA', { headers: { authorization: `Bearer ${secret}` } });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toMatch(/invalid or revoked/);
  });
});

describe('hourly limit', () => {
  let dir: string;
  let limited: ReturnType<typeof createApp>;
  let usage: UsageService;
  beforeAll(async () => {
    dir = await tempDir();
    usage = await UsageService.create({ dataDir: dir, freeHourlyLimit: 3 });
    limited = createApp({ ...svc.deps, usage, responseCache: undefined });
  });
  afterAll(async () => {
    await usage.close();
    await removeDir(dir);
  });
  it('answers 429 with Retry-After and usage_meta past the free limit', async () => {
    for (let i = 0; i < 3; i++) expect((await getJson(limited, '/api/company/AAPL')).status).toBe(200);
    const r = await getJson(limited, '/api/company/AAPL');
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
    expect(r.body).toMatchObject({
      status: 429,
      usage_meta: { requests_this_hour: 4, hourly_limit: 3, remaining: 0, tier_recommendation: 'pro' },
    });
  });
});

describe('HTTP caching, compression, CORS', () => {
  it('serves repeated snapshot-determined GETs from the hot cache with a stable ETag', async () => {
    const a = await getJson(svc.app, '/api/company/MSFT');
    const b = await getJson(svc.app, '/api/company/MSFT');
    expect(a.headers.get('x-proofline-cache')).toBe('miss');
    expect(b.headers.get('x-proofline-cache')).toBe('hit');
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
    const { usage_meta: _a, ...da } = a.body;
    const { usage_meta: _b, ...db } = b.body;
    expect(db).toEqual(da);
  });
  it('answers 304 to a matching If-None-Match', async () => {
    const a = await getJson(svc.app, '/api/company/AAPL');
    const res = await svc.app.fetch(
      new Request('http://proofline.test/api/company/AAPL', { headers: { 'if-none-match': a.headers.get('etag')! } }),
    );
    expect(res.status).toBe(304);
    expect(await res.text()).toBe('');
    expect(res.headers.get('ratelimit-limit')).toBe('500');
  });
  it('drops the cache when a snapshot is swapped', async () => {
    await getJson(svc.app, '/api/company/AAPL');
    expect(svc.deps.responseCache!.size).toBeGreaterThan(0);
    svc.deps.responseCache!.clear();
    expect((await getJson(svc.app, '/api/company/AAPL')).headers.get('x-proofline-cache')).toBe('miss');
  });
  it('compresses with brotli or gzip by Accept-Encoding', async () => {
    for (const enc of ['br', 'gzip'] as const) {
      const res = await svc.app.fetch(
        new Request('http://proofline.test/api/company/AAPL', { headers: { 'accept-encoding': enc === 'br' ? 'gzip, br' : 'gzip' } }),
      );
      expect(res.headers.get('content-encoding')).toBe(enc);
      const bytes = Buffer.from(await res.arrayBuffer());
      const json = JSON.parse((enc === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes)).toString('utf8'));
      expect(json.identity.ticker).toBe('AAPL');
    }
  });
  it('serves /openapi.json the same way every time: one ETag, the same compressed bytes, 304 on a match', async () => {
    const get = async (enc: string, inm?: string) =>
      svc.app.fetch(
        new Request('http://proofline.test/openapi.json', {
          headers: { 'accept-encoding': enc, ...(inm ? { 'if-none-match': inm } : {}) },
        }),
      );
    const plain = await get('identity');
    const text = await plain.text();
    const etag = plain.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    // Served from the document's prepared bytes (platform/prepared-document.ts) with the headers of any document.
    expect(plain.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(plain.headers.get('vary')).toBe('Accept-Encoding');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=300');
    expect(JSON.parse(text).openapi).toMatch(/^3\.1/);
    for (const enc of ['br', 'gzip'] as const) {
      const [a, b] = [await get(enc), await get(enc)];
      expect([a.headers.get('etag'), b.headers.get('etag')]).toEqual([etag, etag]);
      const [ba, bb] = [Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())];
      expect(bb.equals(ba)).toBe(true);
      expect((enc === 'br' ? brotliDecompressSync(ba) : gunzipSync(ba)).toString('utf8')).toBe(text);
    }
    expect((await get('br', etag)).status).toBe(304);
  });
  it('serves /docs and /docs/rules as prepared documents: the rendered page, its length, one ETag, compressed bytes, 304', async () => {
    const o = svc.deps.options;
    const pages: Record<string, string> = {
      '/docs': renderDocsPage(o.version),
      '/docs/rules': renderRulesPage(o.publicBaseUrl, o.version, {
        free: svc.deps.usage?.freeHourlyLimit ?? DEFAULT_FREE_HOURLY_LIMIT,
        pro: svc.deps.usage?.proHourlyLimit ?? DEFAULT_PRO_HOURLY_LIMIT,
      }),
    };
    for (const [path, page] of Object.entries(pages)) {
      const get = async (enc: string, inm?: string) =>
        svc.app.fetch(
          new Request(`http://proofline.test${path}`, { headers: { 'accept-encoding': enc, ...(inm ? { 'if-none-match': inm } : {}) } }),
        );
      const plain = await get('identity');
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await plain.text()).toBe(page);
      expect(plain.headers.get('content-length')).toBe(String(Buffer.byteLength(page)));
      const etag = plain.headers.get('etag')!;
      expect(etag).toMatch(/^W\/"/);
      expect(plain.headers.get('cache-control')).toBe('public, max-age=300');
      for (const enc of ['br', 'gzip'] as const) {
        const res = await get(enc);
        expect(res.headers.get('etag')).toBe(etag);
        const bytes = Buffer.from(await res.arrayBuffer());
        // Compressed as any document is (a page too small to gain is sent as it is).
        const coding = res.headers.get('content-encoding');
        expect(coding === null ? page.length < COMPRESS_MIN_BYTES : coding === enc).toBe(true);
        const text = coding === null ? bytes : enc === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes);
        expect(text.toString('utf8')).toBe(page);
      }
      expect((await get('gzip', etag)).status).toBe(304);
    }
  });
  it('allows cross-origin GETs and answers preflights', async () => {
    const r = await getJson(svc.app, '/api/company/AAPL', { headers: { origin: 'https://example.org' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    const pre = await svc.app.fetch(
      new Request('http://proofline.test/api/company/AAPL', {
        method: 'OPTIONS',
        headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
      }),
    );
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toContain('GET');
  });
  it('answers unknown /api paths with the {error, status} 404 shape', async () => {
    const r = await getJson(svc.app, '/api/nope');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status: 404, path: '/api/nope' });
    expect(r.body.usage_meta).toBeDefined();
  });
});

describe('GET /api/verify/{leaf_hash}', () => {
  let keys: PublicJwk[];
  beforeAll(async () => {
    keys = (await getJson(svc.app, '/.well-known/proofline-keys.json')).body.keys;
  });
  it('publishes the Ed25519 public key as a JWK set', () => {
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
  });
  it('returns the leaf, its valid parent chain and a signed receipt', async () => {
    const card = (await getJson(svc.app, '/api/company/AAPL')).body;
    const r = await getJson(svc.app, `/api/verify/${card.origin.leaf_hash}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      found: true,
      domain: 'registry',
      leaf: { leaf_hash: card.origin.leaf_hash },
      chain: { valid: true, length: 2 },
    });
    expect(r.body.chain.leaves[1].kind).toBe('source');
    expect(r.body.receipt).toMatchObject({
      leaf_hash: card.origin.leaf_hash,
      found: true,
      prev_nonce: null,
      prev_receipt_hash: null,
      key_id: keys[0]!.kid,
    });
    expect(verifyReceiptChain([r.body.receipt], keys).valid).toBe(true);
  });
  it('chains three lookups; the chain verifies offline and fails when any byte of any receipt changes', async () => {
    const hashes = await Promise.all(
      ['AAPL', 'NVDA', 'MSFT'].map(async (t) => (await getJson(svc.app, `/api/company/${t}`)).body.origin.leaf_hash as string),
    );
    const receipts: Receipt[] = [];
    for (const h of hashes) {
      const prev = receipts.at(-1)?.nonce;
      const r = await getJson(svc.app, `/api/verify/${h}${prev ? `?prev_nonce=${prev}` : ''}`);
      expect(r.status).toBe(200);
      receipts.push(r.body.receipt);
    }
    expect(receipts[2]!.prev_receipt_hash).toBe(hashReceipt(receipts[1]!));
    expect(verifyReceiptChain(receipts, keys).valid).toBe(true);
    const text = JSON.stringify(receipts);
    // Alter one byte inside every value of every receipt: each alteration must break the chain.
    for (let i = 0; i < receipts.length; i++) {
      for (const field of Object.keys(receipts[i]!) as Array<keyof Receipt>) {
        const copy = JSON.parse(text) as Array<Record<string, unknown>>;
        const v = copy[i]![field];
        if (typeof v === 'boolean') copy[i]![field] = !v;
        else if (typeof v === 'string') {
          const pos = Math.floor(v.length / 2);
          const c = v[pos]!;
          copy[i]![field] = v.slice(0, pos) + (c === 'a' ? 'b' : c === '0' ? '1' : 'a') + v.slice(pos + 1);
        } else if (v === null) copy[i]![field] = '0'.repeat(32);
        expect(verifyReceiptChain(copy, keys).valid, `receipt ${i} field ${field}`).toBe(false);
      }
    }
    // The CLI does the same with only the public key file.
    const dir = await tempDir();
    await writeFile(path.join(dir, 'keys.json'), JSON.stringify({ keys }));
    await writeFile(path.join(dir, 'chain.json'), text);
    const tampered = JSON.parse(text) as Receipt[];
    tampered[1]!.verified_at = tampered[1]!.verified_at.replace(/\d(?=Z$)/, (d) => String((Number(d) + 1) % 10));
    await writeFile(path.join(dir, 'bad.json'), JSON.stringify(tampered));
    const cli = (f: string) =>
      spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(REPO_ROOT, 'jobs/cli/proofline.cli.ts'),
          'verify-receipts',
          path.join(dir, f),
          '--keys',
          path.join(dir, 'keys.json'),
        ],
        { encoding: 'utf8' },
      );
    const good = cli('chain.json');
    expect(good.stdout).toContain('VALID: chain of 3');
    expect(good.status).toBe(0);
    const bad = cli('bad.json');
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/INVALID #1 .*signature/);
    await removeDir(dir);
  }, 180_000);
  it('continues a chain after a restart (receipts are stored durably)', async () => {
    const card = (await getJson(svc.app, '/api/company/AAPL')).body;
    const first = (await getJson(svc.app, `/api/verify/${card.origin.leaf_hash}`)).body.receipt as Receipt;
    const restarted = createApp({ ...svc.deps, signingKey: svc.deps.signingKey, responseCache: undefined }); // a new app: fresh receipt store reading the same file
    const next = await getJson(restarted, `/api/verify/${card.origin.leaf_hash}?prev_nonce=${first.nonce}`);
    expect(next.status).toBe(200);
    expect(next.body.receipt.prev_receipt_hash).toBe(hashReceipt(first));
    expect(
      verifyReceiptChain(extractReceipts([first, next.body]), (await getJson(restarted, '/.well-known/proofline-keys.json')).body.keys)
        .valid,
    ).toBe(true);
  });
  it('answers 400 for a malformed hash or nonce and for an unknown nonce', async () => {
    const h = (await getJson(svc.app, '/api/company/AAPL')).body.origin.leaf_hash;
    for (const [url, param] of [
      ['/api/verify/ABC', 'leaf_hash'],
      [`/api/verify/${h.toUpperCase()}`, 'leaf_hash'],
      [`/api/verify/${h}?prev_nonce=xyz`, 'prev_nonce'],
      [`/api/verify/${h}?prev_nonce=${'0'.repeat(32)}`, 'prev_nonce'],
    ]) {
      const r = await getJson(svc.app, url!);
      expect(r.status, url).toBe(400);
      expect(r.body.parameter).toBe(param);
    }
  });
  it('answers 404 with a signed found:false receipt for a leaf never issued', async () => {
    const r = await getJson(svc.app, `/api/verify/${'ab'.repeat(32)}`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status: 404, found: false, leaf_hash: 'ab'.repeat(32), receipt: { found: false } });
    expect(verifyReceiptChain([r.body.receipt], keys).valid).toBe(true);
  });
});

describe('GET /api/search', () => {
  it('has its indexes built as a warm-up the server awaits before listening (deps.warmups)', async () => {
    expect(svc.deps.warmups).toHaveLength(1);
    const [companies, text] = (await svc.deps.warmups![0]) as [unknown[], { events: unknown[] }];
    expect(companies.length).toBeGreaterThan(0);
    expect(text.events.length).toBeGreaterThan(0);
    // The queries reuse what the warm-up built.
    expect(await companyIndex(svc.deps.readers.registry!)).toBe(companies);
    expect(await textIndexes(svc.deps.readers.registry!)).toBe(text);
  });

  it('ranks companies by name match and returns {query, results, total}', async () => {
    const r = await getJson(svc.app, '/api/search?q=apple');
    expect(r.status).toBe(200);
    expect(r.body.query).toBe('apple');
    expect(r.body.results.companies[0]).toMatchObject({ ticker: 'AAPL', name: 'Apple Inc.' });
    expect(Array.isArray(r.body.results.people)).toBe(true);
    expect(Array.isArray(r.body.results.events)).toBe(true);
    expect(r.body.total).toBe(r.body.results.companies.length + r.body.results.people.length + r.body.results.events.length);
  });
  it('lists a person once whichever spelling is searched (10-K list and Form 4 filer linked), with every role', async () => {
    const [l] =
      await svc.deps.readers.registry!.query(`SELECT ten_k.person_name AS listed, f4.person_name AS filer, CAST(ten_k.person_cik AS VARCHAR) AS cik
      FROM people ten_k JOIN people f4 ON f4.cik = ten_k.cik AND f4.person_key = ten_k.person_key AND f4.source_kind = 'ownership'
      WHERE ten_k.source_kind = '10-K' AND ten_k.person_name <> f4.person_name LIMIT 1`);
    expect(l).toBeDefined();
    for (const spelling of [String(l!.listed), String(l!.filer)]) {
      const r = await getJson(svc.app, `/api/search?q=${encodeURIComponent(spelling)}`);
      const same = r.body.results.people.filter((p: { person_cik: string }) => p.person_cik === l!.cik);
      expect(same, spelling).toHaveLength(1);
      expect(same[0].score, spelling).toBe(100);
      expect(same[0].roles.length, spelling).toBeGreaterThan(1);
    }
  });

  it('matches an exact ticker first and tags (SIC description) too', async () => {
    expect((await getJson(svc.app, '/api/search?q=nvda')).body.results.companies[0].ticker).toBe('NVDA');
    const semis = (await getJson(svc.app, '/api/search?q=semiconductor&limit=50')).body.results.companies.map(
      (c: { ticker: string }) => c.ticker,
    );
    expect(semis).toContain('NVDA');
  });
  it('answers 400 naming q when it is missing or empty', async () => {
    for (const url of ['/api/search', '/api/search?q=', '/api/search?q=%20%20']) {
      const r = await getJson(svc.app, url);
      expect(r.status, url).toBe(400);
      expect(r.body.parameter).toBe('q');
    }
  });
  it('clamps a limit above its maximum and says so; ignores unknown parameters; 400 on a non-numeric limit', async () => {
    const r = await getJson(svc.app, '/api/search?q=inc&limit=5000&color=blue');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ limit: 50, limit_clamped: { requested: 5000, max: 50 } });
    const bad = await getJson(svc.app, '/api/search?q=inc&limit=ten');
    expect(bad.status).toBe(400);
    expect(bad.body.parameter).toBe('limit');
  });
});

describe('GET /api/stats and /api/ir/rankings', () => {
  it('reports registry totals and 24-hour AI query counts by platform', async () => {
    await getJson(svc.app, '/api/company/AAPL', ua(GPT));
    await getJson(svc.app, '/api/company/AAPL', ua(CLAUDE_USER));
    const r = await getJson(svc.app, '/api/stats');
    expect(r.status).toBe(200);
    expect(r.body.totals.companies).toBeGreaterThan(5);
    expect(r.body.totals.filings).toBeGreaterThan(0);
    expect(r.body.ai_queries_24h.by_platform.openai).toBeGreaterThanOrEqual(2);
    expect(r.body.ai_queries_24h.by_platform.anthropic).toBeGreaterThanOrEqual(1);
    expect(r.body.ai_queries_24h.total_ai).toBeGreaterThanOrEqual(3);
  });
  it('ranks companies by AI-agent query volume', async () => {
    for (let i = 0; i < 8; i++) await getJson(svc.app, '/api/company/MSFT', ua(CLAUDE_USER));
    await getJson(svc.app, '/api/company/320193', ua(GPT)); // by CIK: logged under the resolved ticker
    await clockPast();
    const r = await getJson(svc.app, '/api/ir/rankings?days=7');
    expect(r.status).toBe(200);
    expect(r.body.rankings[0]).toMatchObject({ rank: 1, ticker: 'MSFT', ai_queries: 8, by_platform: { anthropic: 8 } });
    expect(r.body.rankings.find((x: { ticker: string }) => x.ticker === 'AAPL').by_platform.openai).toBeGreaterThanOrEqual(3);
    expect(r.body.rankings.some((x: { ticker: string }) => x.ticker === '320193')).toBe(false);
    // Each company is named as the registry snapshot's company_lookup names it, on the first ranking and the next.
    const names = await svc.deps.readers.registry!.query(`SELECT ticker, name FROM company_lookup WHERE ticker IN ('MSFT', 'AAPL')`);
    const want = Object.fromEntries(names.map((n) => [String(n.ticker), n.name]));
    expect(want.MSFT).toBeTruthy();
    for (const again of [r, await getJson(svc.app, '/api/ir/rankings?days=7')]) {
      const named = Object.fromEntries(again.body.rankings.map((x: { ticker: string; name: string | null }) => [x.ticker, x.name]));
      expect({ MSFT: named.MSFT, AAPL: named.AAPL }).toEqual(want);
    }
  });
  it('clamps limit to 500 and rejects a non-integer days naming it', async () => {
    expect((await getJson(svc.app, '/api/ir/rankings?limit=9999')).body).toMatchObject({
      limit: 500,
      limit_clamped: { requested: 9999, max: 500 },
      days: 30,
    });
    const bad = await getJson(svc.app, '/api/ir/rankings?days=abc');
    expect(bad.status).toBe(400);
    expect(bad.body.parameter).toBe('days');
  });
});

describe('GET /api/health', () => {
  it('is degraded with reasons when a configured Redis is down or the snapshot is stale', async () => {
    const down = createApp({ ...svc.deps, probes: { redis: async () => false }, responseCache: undefined });
    const r = await getJson(down, '/api/health');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'degraded', dependencies: { redis: 'down' } });
    expect(r.body.reasons).toContain('redis is down');
    const later = createApp({ ...svc.deps, now: () => new Date(Date.now() + 72 * 3600_000), responseCache: undefined });
    const s = await getJson(later, '/api/health');
    expect(s.body.status).toBe('degraded');
    expect(s.body.reasons.join(' ')).toMatch(/registry: snapshot is .* hours old/);
  });
  it('is never metered, and a probe that does not answer is reported slow within its deadline', async () => {
    const hung = createApp({ ...svc.deps, probes: { redis: () => new Promise<boolean>(() => {}) }, responseCache: undefined });
    const r = await getJson(hung, '/api/health');
    expect(r.status).toBe(200);
    expect(r.body.usage_meta).toBeUndefined();
    expect(r.headers.get('ratelimit-limit')).toBeNull();
    expect(r.body).toMatchObject({ status: 'degraded', dependencies: { redis: 'slow' } });
    expect(r.body.reasons.join(' ')).toMatch(/redis is slow: no answer within 500 ms/);
  });
  it('answers both probes as finished layer answers: JSON, never cached, with the reason phrase', async () => {
    // The node listener writes a layer answer with one `end`; h3's generic path for a returned object kept each
    // request's node objects alive past the next scavenge (long pauses under a stream of health checks, issue 22).
    for (const url of ['/api/health', '/api/ready']) {
      const res = await svc.app.fetch(new Request(`http://local${url}`));
      // Readiness is 503 here (this test service owns no state store); health is always 200.
      expect(res.status, url).toBe(url === '/api/health' ? 200 : 503);
      expect(res.statusText, url).toBe(url === '/api/health' ? 'OK' : 'Service Unavailable');
      expect(res.headers.get('content-type'), url).toBe('application/json; charset=utf-8');
      expect(res.headers.get('cache-control'), url).toBe('no-store');
      expect(layerResponseOf(res), url).toBeDefined();
      expect(JSON.parse(await res.text()), url).toHaveProperty(url === '/api/health' ? 'status' : 'ready');
    }
  });
  it('shares one probe among overlapping health and readiness requests, and probes afresh for the next one', async () => {
    let redisProbes = 0;
    let stateProbes = 0;
    // A state store whose probe is counted: health and readiness ask nothing else of it.
    const counted = {
      backend: 'duckdb',
      probe: async () => {
        stateProbes++;
        await new Promise((r) => setTimeout(r, 20));
        return true;
      },
    } as unknown as NonNullable<typeof svc.deps.state>;
    const app = createApp({
      ...svc.deps,
      state: counted,
      probes: {
        redis: async () => {
          redisProbes++;
          await new Promise((r) => setTimeout(r, 20));
          return true;
        },
      },
      responseCache: undefined,
    });
    const overlapping = await Promise.all([...Array.from({ length: 6 }, () => getJson(app, '/api/health')), getJson(app, '/api/ready')]);
    for (const r of overlapping) expect(r.status).toBe(200);
    expect(overlapping[0]!.body.dependencies).toMatchObject({ redis: 'up', state: 'up' });
    expect(redisProbes).toBe(1);
    expect(stateProbes).toBe(1);
    await getJson(app, '/api/health');
    expect([redisProbes, stateProbes]).toEqual([2, 2]);
  });
});

describe('503 before anything is published', () => {
  it('answers data routes with 503 and Retry-After', async () => {
    const dir = await tempDir();
    const empty = await buildTestService(testConfig(dir), ['registry']);
    for (const url of ['/api/company/AAPL', '/api/search?q=apple', `/api/verify/${'ab'.repeat(32)}`]) {
      const r = await getJson(empty.app, url);
      expect(r.status, url).toBe(503);
      expect(r.headers.get('retry-after')).toBe('5');
      expect(r.body.usage_meta).toBeDefined();
    }
    await empty.deps.usage?.close();
    await empty.close();
    await removeDir(dir);
  });
});

describe('OpenAPI and /docs', () => {
  it('serves an OpenAPI 3.1 document listing every route the app serves', async () => {
    const r = await getJson(svc.app, '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
    for (const p of [
      '/api/verify/{leaf_hash}',
      '/api/search',
      '/api/stats',
      '/api/ir/rankings',
      '/api/health',
      '/api/company/{ticker}',
      '/.well-known/proofline-keys.json',
    ])
      expect(r.body.paths[p], p).toBeDefined();
    const search = r.body.paths['/api/search'].get;
    expect(search.parameters.find((p: { name: string }) => p.name === 'q')).toMatchObject({ in: 'query', required: true });
    expect(search.responses['429']).toBeDefined();
    const served = (svc.app as unknown as { '~routes': Array<{ method: string; route: string }> })['~routes'].filter(
      (x) => x.method === 'GET',
    );
    for (const s of served) expect(r.body.paths[s.route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')], s.route).toBeDefined();
  });
  it('serves Redoc at /docs with its script from node_modules, and the shared rules at /docs/rules', async () => {
    const docs = await svc.app.fetch(new Request('http://proofline.test/docs'));
    expect(docs.status).toBe(200);
    const page = await docs.text();
    expect(page).toContain('<script src="/docs/redoc.standalone.js"></script>');
    expect(page).toContain('/docs/rules');
    const js = await svc.app.fetch(new Request('http://proofline.test/docs/redoc.standalone.js'));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const res = await svc.app.fetch(new Request('http://proofline.test/docs/rules'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('/api/verify/{leaf_hash}');
    expect(html).toContain('id="pricing"');
    expect(html).toMatch(/<head>[\s\S]*<link rel="ai-discovery" type="application\/json" href="\/.well-known\/ai">[\s\S]*<\/head>/);
  });
});

describe('golden responses (small sample)', () => {
  const strip = (b: Record<string, unknown>) => {
    const { usage_meta: _u, ...rest } = b;
    return rest;
  };
  it('identity card, search and stats totals', async () => {
    await expect(JSON.stringify(strip((await getJson(svc.app, '/api/company/AAPL')).body), null, 2) + '\n').toMatchFileSnapshot(
      '../golden/api/company-aapl.json',
    );
    await expect(JSON.stringify(strip((await getJson(svc.app, '/api/search?q=micro')).body), null, 2) + '\n').toMatchFileSnapshot(
      '../golden/api/search-micro.json',
    );
    await expect(JSON.stringify((await getJson(svc.app, '/api/stats')).body.totals, null, 2) + '\n').toMatchFileSnapshot(
      '../golden/api/stats-totals.json',
    );
  });
});
