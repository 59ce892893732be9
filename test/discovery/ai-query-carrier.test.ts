/** /ai/query over carrier data, on an instance serving the fmcsa domain (30 sample carriers). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir } from '../helpers/env.ts';
import { tinyRegistry } from './discovery-helpers.ts';

let dir: string;
let dots: number[];
let svc: TestService;
beforeAll(async () => {
  const w = await tinyRegistry({ fmcsa: true });
  dir = w.dir;
  dots = w.dots;
  svc = await buildTestService(w.config, ['registry', 'fmcsa']);
});
afterAll(async () => {
  await svc.close();
  await removeDir(dir);
});

describe('/ai/query with carrier data', () => {
  it('lists one feed item per published run of each domain', async () => {
    const { body } = await getJson(svc.app, '/ai/feed.json');
    expect(body.items.filter((i: any) => i.id.startsWith('snapshot:fmcsa:'))).toHaveLength(1);
    expect(body.items.filter((i: any) => i.id.startsWith('snapshot:registry:'))).toHaveLength(1);
  });

  it('answers carrier queries from the fmcsa domain, as /api/carriers does', async () => {
    const { body: contract } = await getJson(svc.app, '/ai/query');
    expect(contract.request.types.map((t: any) => t.type)).toEqual(['company', 'carrier']);
    const byDot = await getJson(svc.app, `/ai/query?type=carrier&q=${dots[0]}`);
    expect(byDot.status).toBe(200);
    expect(byDot.body).toMatchObject({ source: 'fmcsa', query: { type: 'carrier' } });
    expect(byDot.body.results.map((r: any) => Number(r.dot_number))).toEqual([dots[0]]);
    const rest = await getJson(svc.app, `/api/carriers?dot=${dots[0]}`);
    expect(byDot.body.results[0].legal_name).toBe(rest.body.results[0].legal_name);
    const name = String(byDot.body.results[0].legal_name).slice(0, 6);
    const byName = await getJson(svc.app, '/ai/query', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'carrier', q: name }),
    });
    expect(byName.body.results.map((r: any) => Number(r.dot_number))).toContain(dots[0]);
    expect((await getJson(svc.app, '/ai/query?type=carrier&q=99999999')).status).toBe(404);
  });
});
