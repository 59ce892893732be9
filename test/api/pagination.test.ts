/**
 * Bulk export (service/export): any table of the current snapshot as CSV, NDJSON or its parquet file with the
 * manifest SHA-256, for Pro API keys only.
 *
 * One pagination scheme on every list route (service/platform/pagination.ts): `limit` + opaque `cursor`, `next`
 * in the body and `Link: rel="next"`. Walking `next` over /api/red-flags at the small sample scale returns every
 * flagged carrier exactly once; the same holds for /api/carriers; a malformed cursor is a 400 naming `cursor`, and
 * a cursor of another snapshot a 409. A carrier's crashes and inspections page the same way (every crash once with all its vehicle rows, every
 * inspection once with its violations).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../lib/api-keys.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { fmcsaSampleGenerator } from '../../ingest/fmcsa/fmcsa.sample.ts';
import { encodeCursor } from '../../service/platform/pagination.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';

let root: string;
let svc: TestService;
beforeAll(async () => {
  root = await tempDir('proofline-paging-');
  const inputDir = path.join(root, 'in');
  await ensureSample(inputDir, { scale: 'small', seed: 42, generators: [fmcsaSampleGenerator] });
  const config = testConfig(path.join(root, 'data'));
  await ingestAll(config, [fmcsaPipeline], inputDir);
  svc = await buildTestService(config, ['fmcsa']);
  proAuth = { authorization: `Bearer ${(await createApiKey(config.dataDir, { label: 'export', hourlyLimit: 100_000 })).secret}` };
}, 600_000);
let proAuth: Record<string, string>;
afterAll(async () => {
  await svc?.close();
  await removeDir(root);
});

/** Follows `next` from `first` to the last page; checks body `next` = Link header on every page. */
async function walk(first: string): Promise<{ rows: Array<Record<string, unknown>>; pages: number; total: number }> {
  const rows: Array<Record<string, unknown>> = [];
  let url: string | null = first;
  let pages = 0;
  let total = 0;
  while (url) {
    const r = await getJson(svc.app, url);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    pages++;
    total = r.body.total;
    rows.push(...r.body.results);
    const next = r.body.next as string | null;
    if (next) {
      expect(next.startsWith('http://proofline.test/')).toBe(true);
      expect(r.headers.get('link')).toBe(`<${next}>; rel="next"`);
      expect(r.body.next_cursor).toBe(new URL(next).searchParams.get('cursor'));
      const u = new URL(next);
      url = `${u.pathname}${u.search}`;
    } else {
      expect(r.headers.get('link')).toBeNull();
      url = null;
    }
  }
  return { rows, pages, total };
}

describe('cursor pagination', { timeout: 600_000 }, () => {
  it('walks /api/red-flags to the end: every flagged carrier exactly once', async () => {
    const all = await svc.deps.readers.fmcsa!.query('SELECT dot_number FROM carrier_risk WHERE len(red_flag_codes) > 0');
    expect(all.length).toBeGreaterThan(500);
    const { rows, pages, total } = await walk('/api/red-flags?limit=500');
    expect(total).toBe(all.length);
    expect(pages).toBe(Math.ceil(all.length / 500));
    const dots = rows.map((r) => Number(r.dot_number));
    expect(new Set(dots).size).toBe(dots.length);
    expect([...dots].sort((a, b) => a - b)).toEqual(all.map((r) => Number(r.dot_number)).sort((a, b) => a - b));
    // Highest score first across page boundaries.
    for (let i = 1; i < rows.length; i++) expect(Number(rows[i - 1]!.risk_score)).toBeGreaterThanOrEqual(Number(rows[i]!.risk_score));
  });

  it('walks /api/carriers with its filters kept in next', async () => {
    const [{ n }] = await svc.deps.readers.fmcsa!.query("SELECT count(*)::INTEGER AS n FROM carriers WHERE phy_state = 'TX'");
    const { rows, total } = await walk('/api/carriers?state=TX&limit=100');
    expect(total).toBe(n);
    const dots = rows.map((r) => Number(r.dot_number));
    expect(dots.length).toBe(n);
    expect(new Set(dots).size).toBe(n);
    expect(rows.every((r) => r.phy_state === 'TX')).toBe(true);
  });

  it("walks a carrier's /api/crashes to the end: every crash once with all its vehicle rows, counts over every crash", async () => {
    const [top] = await svc.deps.readers.fmcsa!.query(
      'SELECT dot_number, count(DISTINCT crash_id)::INTEGER AS crashes, count(*)::INTEGER AS vehicles FROM crashes GROUP BY dot_number ORDER BY crashes DESC, dot_number LIMIT 1',
    );
    const crashes = Number(top!.crashes);
    expect(crashes).toBeGreaterThan(2);
    const ids: string[] = [];
    let vehicles = 0;
    let url: string | null = `/api/crashes?dot=${top!.dot_number}&limit=2`;
    while (url) {
      const r = await getJson(svc.app, url);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      expect(r.body.total_crashes).toBe(crashes);
      const page = [...new Set((r.body.vehicles as Array<{ crash_id: string }>).map((v) => v.crash_id))];
      expect(page.length).toBe(r.body.returned_crashes);
      ids.push(...page);
      vehicles += r.body.vehicles.length;
      const next = r.body.next as string | null;
      expect(r.headers.get('link')).toBe(next ? `<${next}>; rel="next"` : null);
      url = next ? `${new URL(next).pathname}${new URL(next).search}` : null;
    }
    expect(ids.length).toBe(crashes);
    expect(new Set(ids).size).toBe(crashes);
    expect(vehicles).toBe(Number(top!.vehicles));
  });

  it("walks a carrier's /api/inspections to the end: every inspection once, with its violations", async () => {
    const [top] = await svc.deps.readers.fmcsa!.query(
      'SELECT dot_number, count(*)::INTEGER AS n FROM inspections GROUP BY dot_number ORDER BY n DESC, dot_number LIMIT 1',
    );
    const [{ v }] = await svc.deps.readers.fmcsa!.query(
      'SELECT count(*)::INTEGER AS v FROM violations WHERE inspection_id IN (SELECT inspection_id FROM inspections WHERE dot_number = $dot)',
      { dot: Number(top!.dot_number) },
    );
    const n = Number(top!.n);
    expect(n).toBeGreaterThan(3);
    const ids: string[] = [];
    let violations = 0;
    let url: string | null = `/api/inspections?dot=${top!.dot_number}&limit=3`;
    while (url) {
      const r = await getJson(svc.app, url);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      expect(r.body.total_inspections_on_file).toBe(n);
      ids.push(...r.body.inspections.map((i: { inspection_id: string }) => i.inspection_id));
      violations += r.body.violations.length;
      const next = r.body.next as string | null;
      expect(r.headers.get('link')).toBe(next ? `<${next}>; rel="next"` : null);
      url = next ? `${new URL(next).pathname}${new URL(next).search}` : null;
    }
    expect(ids.length).toBe(n);
    expect(new Set(ids).size).toBe(n);
    expect(violations).toBe(Number(v));
  });

  it('answers 400 naming cursor for a malformed one and 409 for a cursor of another snapshot', async () => {
    expect(await getJson(svc.app, '/api/red-flags?cursor=nope')).toMatchObject({ status: 400, body: { parameter: 'cursor' } });
    const stale = encodeCursor(500, 'an-older-snapshot');
    expect((await getJson(svc.app, `/api/red-flags?cursor=${stale}`)).status).toBe(409);
  });
});

describe('bulk export', { timeout: 300_000 }, () => {
  const get = (p: string, headers: Record<string, string> = {}) => svc.app.fetch(new Request(`http://proofline.test${p}`, { headers }));

  it('lists the tables of the current snapshot with rows, SHA-256 and formats', async () => {
    const r = await getJson(svc.app, '/api/export');
    expect(r.status).toBe(200);
    const carriers = r.body.tables.find((t: { table: string }) => t.table === 'carriers');
    const manifest = svc.deps.readers.fmcsa!.manifest!;
    expect(carriers).toMatchObject({ domain: 'fmcsa', rows: manifest.tables.carriers!.rows, sha256: manifest.tables.carriers!.sha256 });
  });

  it('refuses the free tier with 402', async () => {
    const r = await get('/api/export/fmcsa/carriers?format=csv');
    expect(r.status).toBe(402);
    expect(await r.json()).toMatchObject({ tier: 'free' });
  });

  it('sends a Pro client the parquet file whose SHA-256 is the manifest one, and every row as CSV and NDJSON', async () => {
    const tm = svc.deps.readers.fmcsa!.manifest!.tables.carriers!;
    const pq = await get('/api/export/fmcsa/carriers?format=parquet', proAuth);
    expect(pq.status).toBe(200);
    const bytes = new Uint8Array(await pq.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(tm.sha256);
    expect(pq.headers.get('x-proofline-sha256')).toBe(tm.sha256);
    expect(pq.headers.get('content-disposition')).toMatch(/attachment; filename="fmcsa\.carriers\..+\.parquet"/);

    const csv = await get('/api/export/fmcsa/carriers?format=csv', proAuth);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = (await csv.text()).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^dot_number,/);
    expect(lines.length).toBe(tm.rows + 1);

    const nd = await get('/api/export/fmcsa/carriers?format=ndjson', proAuth);
    const rows = (await nd.text())
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { dot_number: number });
    expect(rows.length).toBe(tm.rows);
    expect(new Set(rows.map((r) => r.dot_number)).size).toBe(tm.rows);
  });

  it('answers 404 for an unknown table and 400 for an unknown format', async () => {
    expect((await get('/api/export/fmcsa/nope', proAuth)).status).toBe(404);
    expect((await get('/api/export/fmcsa/carriers?format=xlsx', proAuth)).status).toBe(400);
  });
});
