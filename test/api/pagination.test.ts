/**
 * One pagination scheme on every list route (service/platform/pagination.ts): `limit` + opaque `cursor`, `next`
 * in the body and `Link: rel="next"`. Walking `next` over /api/red-flags at the small sample scale returns every
 * flagged carrier exactly once; the same holds for /api/carriers; a malformed cursor is a 400 naming `cursor`, and
 * a cursor of another snapshot a 409.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
}, 600_000);
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

  it('answers 400 naming cursor for a malformed one and 409 for a cursor of another snapshot', async () => {
    expect(await getJson(svc.app, '/api/red-flags?cursor=nope')).toMatchObject({ status: 400, body: { parameter: 'cursor' } });
    const stale = encodeCursor(500, 'an-older-snapshot');
    expect((await getJson(svc.app, `/api/red-flags?cursor=${stale}`)).status).toBe(409);
  });
});
