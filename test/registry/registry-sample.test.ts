/**
 * The registry layers on the small deterministic sample: every endpoint of
 * service/registry-layers answers with schema ids, origin leaves that verify,
 * the documented error and clamp behaviour, and people who sit on more than
 * one board.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { runPipelineInProcess } from '../../jobs/in-process.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { sampleUniverse } from '../../ingest/sample/universe.ts';
import { silentLogger } from '../../lib/log.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { buildRegistryApp, getJson } from './layers-app.ts';

/** Every `origin` object anywhere in a response. */
function origins(v: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(v)) {
    for (const x of v) origins(x, out);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'origin' && x !== null) out.push(x);
      else origins(x, out);
    }
  }
  return out;
}

describe('registry layers on the small sample', () => {
  let dir: string;
  let svc: Awaited<ReturnType<typeof buildRegistryApp>>;
  let reader: SnapshotReader;

  beforeAll(async () => {
    dir = await tempDir('proofline-registry-sample-');
    const input = `${dir}/input`;
    await ensureSample(input, { scale: 'small', seed: 42, generators: [edgarSampleGenerator] });
    const config = testConfig(`${dir}/data`);
    await runPipelineInProcess(registryPipeline, { config, log: silentLogger, inputDir: input, force: true, backoffMs: 1, concurrency: 2 });
    svc = await buildRegistryApp(config);
    reader = await SnapshotReader.open(`${dir}/data`, 'registry', { poolSize: 1 });
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    await reader?.close();
    await removeDir(dir);
  });

  it('ingests every sample layer without rejects', async () => {
    const [r] =
      await reader.query(`SELECT (SELECT count(*) FROM rejects)::INTEGER AS rejects, (SELECT count(*) FROM documents WHERE status = 'failed')::INTEGER AS failed,
      (SELECT count(DISTINCT cik) FROM signal_hits)::INTEGER AS signal_companies, (SELECT count(*) FROM index_entries)::INTEGER AS index_rows,
      (SELECT count(*) FROM company_facts)::INTEGER AS facts`);
    expect(r).toMatchObject({ rejects: 0, failed: 0 });
    expect(Number(r.signal_companies)).toBeGreaterThan(200);
    expect(Number(r.index_rows)).toBeGreaterThan(0);
    expect(Number(r.facts)).toBeGreaterThanOrEqual(900);
  });

  it('serves layer 1-3, earnings and people for AAPL with verifiable origins', async () => {
    for (const p of ['profile?origins=full', 'timeline?origins=full', 'filings?form=8-K', 'earnings', 'people']) {
      const { status, body } = await getJson(svc.app, `/api/company/AAPL/${p}`);
      expect(status, p).toBe(200);
      expect(body.schema).toBe('proofline/sec-company/v1');
      expect(body.origin, p).not.toBeNull();
      for (const o of origins(body)) expect(verifyLeaf(o), `${p}: ${JSON.stringify(o)}`).toBe(true);
    }
    const profile = (await getJson(svc.app, '/api/company/AAPL/profile')).body;
    expect(profile.layer).toBe(1);
    expect(profile.key_facts.employees.value).toBe(164_000);
    expect(profile.products.map((x: { name: string }) => x.name)).toContain('Personal Computers');
    expect(profile.partnerships).toHaveLength(1);
    expect(profile.people.length).toBeGreaterThanOrEqual(3);
    expect(profile.affiliations.length).toBeGreaterThan(0);
    const earnings = (await getJson(svc.app, '/api/company/AAPL/earnings')).body;
    expect(earnings.confirmed[0]).toMatchObject({ confirmed: true, confidence: 1 });
    expect(['BMO', 'AMC']).toContain(earnings.confirmed[0].timing);
    expect(earnings.predicted[0]).toMatchObject({ confirmed: false, timing_basis: 'history' });
    expect(earnings.predicted[0].date > earnings.confirmed[0].date).toBe(true);
    const filings = (await getJson(svc.app, '/api/company/AAPL/filings?form=8-K&limit=5000')).body;
    expect(filings.limit_clamped).toEqual({ requested: 5000, max: 1000 });
    expect(
      filings.filings.every(
        (f: { form: string; document_url: string }) =>
          f.form === '8-K' && f.document_url.startsWith('https://www.sec.gov/Archives/edgar/data/320193/'),
      ),
    ).toBe(true);
  });

  it("layers 1 and 2 keep to their token budgets with a leaf hash per row, each the hash of the row's full leaf and stored for /api/verify", async () => {
    const tokens = (b: Record<string, unknown>) => Math.round(JSON.stringify({ ...b, usage_meta: undefined }).length / 4); // ~4 characters a token
    for (const [layer, budget] of [
      ['profile', 1000],
      ['timeline', 2400],
    ] as const) {
      const compact = (await getJson(svc.app, `/api/company/AAPL/${layer}`)).body;
      const full = (await getJson(svc.app, `/api/company/AAPL/${layer}?origins=full`)).body;
      expect(tokens(compact), layer).toBeLessThan(budget);
      expect(tokens(compact), layer).toBeLessThan(tokens(full) / 1.8);
      expect(compact.origins_note).toMatch(/\/api\/verify\/\{origin_leaf\}/);
      expect(verifyLeaf(compact.origin)).toBe(true);
      const hashes: string[] = [];
      const leaves: Array<{ leaf_hash: string }> = [];
      const walk = (a: unknown, b: unknown): void => {
        if (Array.isArray(a)) {
          for (const [i, x] of a.entries()) walk(x, (b as unknown[])[i]);
        } else if (a && typeof a === 'object') {
          for (const [k, v] of Object.entries(a)) {
            if (k === 'origin_leaf') {
              hashes.push(v as string);
              leaves.push((b as { origin: { leaf_hash: string } }).origin);
            } else if (k !== 'origin') walk(v, (b as Record<string, unknown>)[k]);
          }
        }
      };
      walk(compact, full);
      expect(hashes.length, layer).toBeGreaterThan(5);
      expect(hashes, layer).toEqual(leaves.map((l) => l.leaf_hash));
      // /api/verify looks leaves up in origin_leaves: every row's hash is there.
      const stored = await reader.query(
        `SELECT count(DISTINCT leaf_hash)::INTEGER AS n FROM origin_leaves WHERE list_contains(from_json($hashes, '["VARCHAR"]'), leaf_hash)`,
        { hashes: JSON.stringify(hashes) },
      );
      expect(stored[0]!.n, layer).toBe(new Set(hashes).size);
    }
    expect((await getJson(svc.app, '/api/company/AAPL/profile?origins=all')).body).toMatchObject({ status: 400, parameter: 'origins' });
  });

  it("links a 10-K executive to the same company's Form 4 filer of the same name (one person_key and CIK)", async () => {
    const linked = await reader.query(`SELECT ten_k.person_name AS listed, f4.person_name AS filer, ten_k.person_key, ten_k.person_cik
      FROM people ten_k JOIN people f4 ON f4.cik = ten_k.cik AND f4.person_key = ten_k.person_key AND f4.source_kind = 'ownership'
      WHERE ten_k.source_kind = '10-K' AND ten_k.ticker = 'AAPL'`);
    expect(linked.length).toBeGreaterThan(0);
    for (const l of linked) {
      expect(String(l.person_key)).toBe(`cik${l.person_cik}`);
      expect(
        String(l.listed)
          .replace(/[^A-Za-z ]/g, '')
          .toLowerCase(),
      ).toBe(
        String(l.filer)
          .replace(/[^A-Za-z ]/g, '')
          .toLowerCase(),
      );
    }
    // /api/person finds the person by either spelling, with the roles of both sources.
    for (const spelling of [String(linked[0]!.listed), String(linked[0]!.filer)]) {
      const p = await getJson(svc.app, `/api/person/${encodeURIComponent(spelling)}`);
      expect(p.status, spelling).toBe(200);
      expect(p.body.person.cik, spelling).toBe(String(linked[0]!.person_cik));
      const sources = p.body.career.flatMap((c: { source: string; also_reported_as?: Array<{ source: string }> }) => [
        c.source,
        ...(c.also_reported_as ?? []).map((x) => x.source),
      ]);
      expect(new Set(sources), spelling).toEqual(new Set(['10-K', 'ownership']));
    }
    // Two spellings of one role ("President and CEO" on a Form 4, "President and Chief Executive Officer" in the
    // 10-K) are one row, keeping the full spelling and the other as also_reported_as (issue 19).
    const jones = (await getJson(svc.app, '/api/person/Daniel%20A%20Jones')).body;
    const ceo = jones.career.filter((c: { role: string }) => /president/i.test(c.role));
    expect(ceo).toHaveLength(1);
    expect(ceo[0]).toMatchObject({ role: 'President and Chief Executive Officer', role_type: 'executive_officer' });
    expect(ceo[0].also_reported_as).toEqual([expect.objectContaining({ role: 'President and CEO', source: 'ownership' })]);
    const people = (await getJson(svc.app, '/api/company/AAPL/people')).body;
    const names = people.executives.map((x: { name: string; role: string }) => `${x.name}|${x.role}`);
    expect(names.filter((n: string) => /jones/i.test(n))).toEqual(['Daniel A. Jones|President and Chief Executive Officer']);
    // A listed name that no reporting owner of the company has keeps its name key and no CIK.
    const unlinked = await reader.query(
      `SELECT person_key, person_cik FROM people WHERE source_kind = '10-K' AND person_cik IS NULL LIMIT 5`,
    );
    for (const u of unlinked) expect(String(u.person_key)).not.toMatch(/^cik/);
  });

  it('finds a person by partial name across the companies where they sit', async () => {
    const [top] = await reader.query(
      `SELECT person_name FROM people WHERE role_type = 'director' GROUP BY person_name ORDER BY count(DISTINCT cik) DESC, person_name LIMIT 1`,
    );
    const last = String(top.person_name).split(' ').slice(-2).join(' ');
    const { status, body } = await getJson(svc.app, `/api/person/${encodeURIComponent(last.toLowerCase())}`);
    expect(status).toBe(200);
    expect(body.schema).toBe('proofline/sec-person/v1');
    expect(new Set(body.career.map((c: { ticker: string }) => c.ticker)).size).toBeGreaterThan(1);
    expect(body.career[0]).toMatchObject({
      role_type: 'director',
      period: expect.stringMatching(/^\d{4}-\d{2}-\d{2}( to \d{4}-\d{2}-\d{2})?$/),
      period_detail: { from: expect.any(String) },
    });
    const missing = await getJson(svc.app, '/api/person/zzqx%20nobody');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ status: 404, name: 'zzqx nobody' });
  });

  it('/api/signals: index without params, filters, also, clamp, and 400s naming the parameter', async () => {
    const idx = (await getJson(svc.app, '/api/signals')).body;
    // Spec 000 rule 2: any parameter (also limit alone) asks for results; only none at all gives the index.
    const limited = (await getJson(svc.app, '/api/signals?limit=2')).body;
    expect(limited).toMatchObject({ returned: 2 });
    expect(limited.types).toBeUndefined();
    expect(limited.signals).toHaveLength(2);
    expect(idx.types.map((t: { type: string }) => t.type)).toEqual(['capex_increase', 'ai_adoption', 'restructuring', 'litigation_risk']);
    expect(idx.types.every((t: { hits: number }) => t.hits > 0)).toBe(true);
    const both = (await getJson(svc.app, '/api/signals?type=ai_adoption&also=capex_increase&min_strength=2&limit=500')).body;
    expect(both.limit_clamped).toEqual({ requested: 500, max: 200 });
    expect(both.signals.length).toBeGreaterThan(0);
    expect(both.signals.every((s: { signal_type: string; strength: number }) => s.signal_type === 'ai_adoption' && s.strength >= 2)).toBe(
      true,
    );
    const nyse = (await getJson(svc.app, '/api/signals?type=litigation_risk&exchange=nyse&limit=3')).body;
    expect(nyse.returned).toBe(3);
    expect(nyse.signals.every((s: { exchange: string }) => s.exchange === 'NYSE')).toBe(true);
    for (const o of origins(nyse)) expect(verifyLeaf(o)).toBe(true);
    expect((await getJson(svc.app, '/api/signals?type=bogus')).body).toMatchObject({ status: 400, parameter: 'type' });
    expect((await getJson(svc.app, '/api/signals?min_strength=9')).body).toMatchObject({ status: 400, parameter: 'min_strength' });
    expect((await getJson(svc.app, '/api/signals?also=restructuring')).body).toMatchObject({ status: 400, parameter: 'also' });
    const nvda = (await getJson(svc.app, '/api/signals?ticker=NVDA')).body;
    await expect(JSON.stringify(nvda, null, 2) + '\n').toMatchFileSnapshot('../golden/edgar/sample-signals-nvda.json');
  });

  it('pages /api/signals (filtered) and /api/company/{t}/filings with cursor and next: every row exactly once', async () => {
    const walk = async (first: string, key: 'signals' | 'filings') => {
      const rows: Array<Record<string, unknown>> = [];
      let url: string | null = first;
      let total = 0;
      while (url) {
        const r = await getJson(svc.app, url);
        expect(r.status).toBe(200);
        total = r.body.total;
        rows.push(...r.body[key]);
        expect(r.headers.get('link')).toBe(r.body.next ? `<${r.body.next}>; rel="next"` : null);
        url = r.body.next ? new URL(r.body.next).pathname + new URL(r.body.next).search : null;
      }
      return { rows, total };
    };
    const signals = await walk('/api/signals?type=litigation_risk&limit=3', 'signals');
    expect(signals.total).toBeGreaterThan(3);
    expect(signals.rows.length).toBe(signals.total);
    expect(new Set(signals.rows.map((s) => JSON.stringify(s))).size).toBe(signals.total);
    const filings = await walk('/api/company/AAPL/filings?limit=2', 'filings');
    expect(filings.total).toBeGreaterThan(2);
    expect(new Set(filings.rows.map((f) => f.accession)).size).toBe(filings.total);
  });

  it('unknown tickers are 404 with a hint; acquired sample companies are not active', async () => {
    const r = await getJson(svc.app, '/api/company/ZZZZZ/timeline');
    expect(r).toMatchObject({ status: 404, body: { ticker: 'ZZZZZ' } });
    const gone = sampleUniverse('small', 42).filter((c) => !c.active);
    const rows = await reader.query(`SELECT ticker, status FROM company_lookup WHERE is_primary`);
    const status = new Map(rows.map((x) => [x.ticker, x.status]));
    expect(gone.length).toBeGreaterThan(3);
    for (const c of gone) {
      expect(status.get(c.ticker), c.ticker).not.toBe('active');
      if (c.end_reason === 'acquired') expect(status.get(c.ticker), c.ticker).toBe('acquired');
    }
  });
});
