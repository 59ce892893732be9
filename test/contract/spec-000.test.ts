import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, type TestService } from '../helpers/app.ts';
import { buildRegistryWorld } from '../helpers/registry-world.ts';
import { removeDir } from '../helpers/env.ts';
import { type ContractTable, checkShape } from './shape.js';
import {
  HEALTH,
  IDENTITY_CARD,
  NOT_FOUND,
  PERSON_CAREER,
  SEARCH_RESULT,
  SPEC_000,
  SPEC_000_LAYER_TOKENS,
  SPEC_000_VALUES,
  STOCK_QUOTE,
  TRANSCRIPT_INDEX,
  USAGE_META,
} from './spec-000.table.js';

let root: string;
let svc: TestService;

beforeAll(async () => {
  ({ root, svc } = await buildRegistryWorld());
}, 300_000);
afterAll(async () => {
  await svc?.deps.usage?.close();
  await svc?.close();
  if (root) await removeDir(root);
});

const get = (p: string) => getJson(svc.app, p);

/** Fails with every violation listed, each naming the specification's table and the field. */
function expectContract(body: unknown, ...tables: ContractTable[]): void {
  expect(tables.flatMap((t) => checkShape(body, t))).toEqual([]);
}

/** Size of an answer in tokens, about 4 characters each, without the usage_meta every /api body carries. */
function tokensOf(body: Record<string, unknown>): number {
  const { usage_meta: _u, ...data } = body;
  return Math.round(JSON.stringify(data).length / 4);
}

describe(`${SPEC_000}: typed resources`, () => {
  it('GET /api/company/{ticker}: the identity card, by ticker and by CIK; 404 {error, ticker, hint}', async () => {
    for (const ref of ['AAPL', '320193', 'NVDA', 'MSFT']) {
      const r = await get(`/api/company/${ref}`);
      expect(r.status, ref).toBe(200);
      expectContract(r.body, IDENTITY_CARD, USAGE_META);
      expect(SPEC_000_VALUES.company_status).toContain(r.body.identity.status);
      expect(r.body.schema).toMatch(/^[a-z0-9-]+\/sec-company\/v1$/);
      expect(r.body.layer).toBe(0);
    }
    const aapl = (await get('/api/company/AAPL')).body;
    expect(aapl.identity.cik).toBe('320193');
    // A quote and a share count exist for AAPL in the sample: the market cap is a number, the same as /quote's.
    const quote = (await get('/api/company/AAPL/quote')).body;
    expect(aapl.peak_metrics.market_cap_usd).toBe(quote.market_context.market_cap);
    expect(aapl.peak_metrics.employees).toBe(quote.market_context.employees);
    const full = await get('/api/company/AAPL?detail=full');
    expectContract(full.body, IDENTITY_CARD, USAGE_META);
    const missing = await get('/api/company/ZZZZ');
    expect(missing.status).toBe(404);
    expectContract(missing.body, NOT_FOUND);
  });

  it('the summary reads correctly for every status', async () => {
    const rows = await svc.deps.readers.registry.query(
      `SELECT any_value(ticker) AS ticker, status FROM company_lookup WHERE is_primary GROUP BY status ORDER BY status`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      const card = (await get(`/api/company/${row.ticker}`)).body;
      expect(card.summary, String(row.status)).not.toMatch(/\ba [aeiou]/i);
      expect(card.summary).toMatch(/^.+ \(.*\) is an? .*SEC registrant/);
    }
  });

  it('GET /api/company/{ticker}/quote: the stock quote', async () => {
    const r = await get('/api/company/AAPL/quote');
    expect(r.status).toBe(200);
    expectContract(r.body, STOCK_QUOTE, USAGE_META);
    expect(r.body.schema).toMatch(/\/stock-quote\/v1$/);
    expect(typeof r.body.market_context.market_cap).toBe('number');
    expect(Number.isInteger(r.body.market_context.employees)).toBe(true);
  });

  it('GET /api/company/{ticker}/transcripts: the transcript index; 404 for a company without any', async () => {
    const r = await get('/api/company/AAPL/transcripts');
    expect(r.status).toBe(200);
    expectContract(r.body, TRANSCRIPT_INDEX, USAGE_META);
    expect(r.body.schema).toMatch(/\/sec-transcripts\/v1$/);
    expect(r.body.transcripts.some((t: { speakers: string[] }) => t.speakers.length > 0)).toBe(true);
    expect((await get('/api/company/ZZZZ/transcripts')).status).toBe(404);
  });

  it('GET /api/person/{name}: the person career, case-insensitive and partial; 404 for nobody', async () => {
    for (const name of ['Daniel%20A%20Jones', 'daniel%20a.%20jones', 'jones']) {
      const r = await get(`/api/person/${name}`);
      expect(r.status, name).toBe(200);
      expectContract(r.body, PERSON_CAREER, USAGE_META);
      expect(r.body.schema).toMatch(/\/sec-person\/v1$/);
    }
    expect((await get('/api/person/zzqx%20nobody')).status).toBe(404);
  });

  it('GET /api/search: companies on name, summary and tags; people on name or notes; total = number of matches', async () => {
    for (const q of ['apple', 'cupertino', 'electronic computers', 'jones', 'executive lists']) {
      const r = await get(`/api/search?q=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(200);
      expectContract(r.body, SEARCH_RESULT, USAGE_META);
    }
    const city = (await get('/api/search?q=cupertino')).body;
    expect(city.results.companies.map((c: { ticker: string }) => c.ticker)).toContain('AAPL');
    const tag = (await get(`/api/search?q=${encodeURIComponent('large accelerated filer')}&limit=1`)).body;
    expect(tag.results.companies).toHaveLength(1);
    expect(tag.total).toBeGreaterThan(1);
    const notes = (await get(`/api/search?q=${encodeURIComponent('Forms 3/4/5')}`)).body;
    expect(notes.results.people.length).toBeGreaterThan(0);
    expect((await get('/api/search')).status).toBe(400);
  });

  it('GET /api/health: health, with db a string', async () => {
    const r = await get('/api/health');
    expect(r.status).toBe(200);
    expectContract(r.body, HEALTH);
    expect(SPEC_000_VALUES.health_status).toContain(r.body.status);
  });

  it('usage_meta: every /api JSON answer carries it with the specified types', async () => {
    for (const p of ['/api/company/AAPL', '/api/stats', '/api/signals', '/api/ir/rankings', '/api/search?q=apple']) {
      const r = await get(p);
      expectContract(r.body, USAGE_META);
      expect(SPEC_000_VALUES.tiers).toContain(r.body.usage_meta.current_tier);
    }
  });
});

describe(`${SPEC_000}: untyped resources answer with the specified statuses`, () => {
  const ok: Array<[string, number]> = [
    ['/api/company/AAPL/profile', 200],
    ['/api/company/AAPL/timeline', 200],
    ['/api/company/AAPL/filings', 200],
    ['/api/company/AAPL/filings?form=10-K', 200],
    ['/api/company/AAPL/filings?form=10-Q', 200],
    ['/api/company/AAPL/filings?form=8-K', 200],
    ['/api/company/AAPL/quote/history', 200],
    ['/api/company/AAPL/quote/history?limit=5&from=2026-01-02', 200],
    ['/api/company/AAPL/facts', 200],
    ['/api/company/AAPL/facts?type=guidance&topic=ai', 200],
    ['/api/company/AAPL/earnings', 200],
    ['/api/company/AAPL/people', 200],
    ['/api/signals', 200],
    ['/api/signals?type=ai_adoption&also=capex_increase&min_strength=1&limit=5', 200],
    ['/api/search/transcripts?topic=ai&first=true', 200],
    ['/api/ir/rankings?days=7&limit=5', 200],
    ['/api/stats', 200],
    ['/api/company/ZZZZ/profile', 404],
    ['/api/company/ZZZZ/timeline', 404],
    ['/api/company/ZZZZ/filings', 404],
    ['/api/company/ZZZZ/facts', 404],
    ['/api/company/ZZZZ/people', 404],
    [`/api/verify/${'g'.repeat(64)}`, 400],
    ['/api/verify/abc', 400],
  ];
  it.each(ok)('GET %s → %i, a JSON object with usage_meta', async (p, status) => {
    const r = await get(p);
    expect(r.status, p).toBe(status);
    expect(typeof r.body, p).toBe('object');
    if (status === 200) expectContract(r.body, USAGE_META);
  });

  it('GET /api/verify/{leaf_hash}: 200 with a receipt for a served leaf; prev_nonce chains', async () => {
    const leaf = (await get('/api/company/AAPL')).body.origin.leaf_hash as string;
    const first = await get(`/api/verify/${leaf}`);
    expect(first.status).toBe(200);
    const next = await get(`/api/verify/${leaf}?prev_nonce=${first.body.receipt.nonce}`);
    expect(next.status).toBe(200);
  });

  it('/api/signals: no parameters at all is the index; any parameter, also limit alone, gives results', async () => {
    const idx = (await get('/api/signals')).body;
    expect(idx.types.map((t: { type: string }) => t.type)).toEqual(expect.arrayContaining([...SPEC_000_VALUES.signal_types]));
    for (const p of ['limit=3', 'min_strength=1', 'exchange=Nasdaq', 'type=ai_adoption']) {
      const r = (await get(`/api/signals?${p}`)).body;
      expect(r.types, p).toBeUndefined();
      expect(Array.isArray(r.signals), p).toBe(true);
    }
    expect((await get('/api/signals?limit=3')).body.signals).toHaveLength(3);
  });
});

describe(`${SPEC_000}: content the specification describes`, () => {
  it('the filing index: a filing whose document was not fetched is never `extracted`', async () => {
    const { filings } = (await get('/api/company/AAPL/filings')).body;
    expect(filings.length).toBeGreaterThan(0);
    for (const f of filings) {
      if (f.extraction_reason === 'document not fetched yet') expect(f.extraction_status, f.accession).toBe('pending');
      if (f.extraction_status === 'extracted') expect(f.extraction_reason, f.accession).not.toBe('document not fetched yet');
    }
  });

  it('the timeline has product launches beside 8-K milestones; people are one row per person and role', async () => {
    const timeline = (await get('/api/company/AAPL/timeline?limit=200')).body;
    expect(timeline.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['product_launch', 'financial_results']));
    const people = (await get('/api/company/AAPL/people')).body;
    const keys = people.executives.map((p: { name: string; role: string }) => `${p.name.replace(/\./g, '')}|${p.role}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((k: string) => k.startsWith('Daniel A Jones|President'))).toHaveLength(1);
  });
});

describe(`${SPEC_000}: tiers`, () => {
  it('Pro is described as what is served (higher limits, the registered key commercial use needs), benchmarks not claimed', async () => {
    const res = await svc.app.fetch(new Request('http://proofline.test/docs/rules'));
    const html = await res.text();
    expect(html).toContain('id="pricing"');
    expect(html).toContain('id="license"');
    expect(html).toMatch(/Aggregated benchmarks are not offered on any tier/);
    const meta = (await get('/api/company/AAPL')).body.usage_meta;
    expect(meta.pricing).toMatch(/\/docs\/rules#pricing$/);
    expect(meta.license).toMatch(/\/docs\/rules#license$/);
    expect(meta.upsell).not.toMatch(/benchmark/i);
  });
});

describe(`${SPEC_000}: layer sizes (about 200, 800 and 2,000 tokens on AAPL), detail one parameter away`, () => {
  it.each([
    ['identity', '/api/company/AAPL', '/api/company/AAPL?detail=full'],
    ['profile', '/api/company/AAPL/profile', '/api/company/AAPL/profile?detail=full'],
    ['timeline', '/api/company/AAPL/timeline', '/api/company/AAPL/timeline?detail=full'],
  ] as const)('%s', async (layer, path, detailPath) => {
    const target = SPEC_000_LAYER_TOKENS[layer];
    const def = tokensOf((await get(path)).body);
    // "About": within 20 % of the stated size.
    expect(def, `${layer}: ${def} tokens`).toBeGreaterThanOrEqual(target * 0.8);
    expect(def, `${layer}: ${def} tokens`).toBeLessThanOrEqual(target * 1.2);
    const detail = tokensOf((await get(detailPath)).body);
    expect(detail, `${layer} with detail`).toBeGreaterThan(def);
  });
});

describe('the contract check itself', () => {
  it('names the field and the specification when a type breaks', () => {
    const broken = { identity: { cik: 320193 }, peak_metrics: { market_cap_usd: '3T' } };
    const problems = checkShape(broken, IDENTITY_CARD);
    expect(problems).toContain(`${SPEC_000}: company identity card (layer 0): identity.cik should be digits, got 320193 (at identity.cik)`);
    expect(problems).toContain(
      `${SPEC_000}: company identity card (layer 0): peak_metrics.market_cap_usd should be number, got "3T" (at peak_metrics.market_cap_usd)`,
    );
  });
});
