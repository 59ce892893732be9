/**
 * Every REST endpoint of the vetting and proof-of-care specification
 * (`../shared/spec/001_2c993ec8aa6fda8f.txt`), called on the app built in
 * process over the real fmcsa pipeline output, its answer checked against the
 * contract tables of spec-001.table.ts. A type change fails here naming the
 * specification and the field.
 */
import { SignedVettingSchema } from '../../service/vetting/vetting.schema.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson } from '../helpers/app.ts';
import { buildWorld, type World } from '../vetting/fmcsa-world.ts';
import { checkShape, type ContractTable } from './shape.ts';
import { BASIC_CATEGORIES, careCreated, careVerification, nested, plans, vettingRecord, vettingRecordById } from './spec-001.table.ts';

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

let w: World;
let dots: number[];
let vin: string;
beforeAll(async () => {
  w = await buildWorld();
  const fmcsa = w.svc.deps.readers.fmcsa!;
  dots = (await fmcsa.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 4')).map((r) => Number(r.dot_number));
  vin = String((await fmcsa.query('SELECT vin FROM crashes WHERE vin IS NOT NULL ORDER BY vin LIMIT 1'))[0]?.vin ?? '1XKYDP9X0HJ000000');
}, 120_000);
afterAll(async () => w?.close());

/** Calls `path`, expects `status`, checks the body against `table` (when given) and returns it. */
async function answer(path: string, init: RequestInit | undefined, status: number, table: ContractTable | null): Promise<any> {
  const r = await getJson(w.svc.app, path, init);
  expect(r.status, `${init?.method ?? 'GET'} ${path}: ${JSON.stringify(r.body).slice(0, 200)}`).toBe(status);
  expect(typeof r.body, path).toBe('object');
  if (table) expect(checkShape(r.body, table), path).toEqual([]);
  return r.body;
}

describe('spec 001 contract: vetting', () => {
  it('POST /api/vet answers a vetting record of the specified types', async () => {
    const rec = await answer('/api/vet', post({ dot_number: String(dots[0]), broker_id: 'contract' }), 200, vettingRecord);
    expect(rec.vetting_id).toMatch(/^VET-/);
    expect(['APPROVE', 'CAUTION', 'REJECT']).toContain(rec.recommendation);
    // The answer is exactly the one schema of a signed record (service/vetting/vetting.schema.ts), no field missing and
    // none extra, plus what the response adds beside it (the account's credits and usage_meta).
    const { credits: _credits, usage_meta: _usage, ...signed } = rec;
    expect(SignedVettingSchema.strict().parse(signed)).toEqual(signed);
    // Every member of `basics` is a numeric score keyed by a snake_case category.
    for (const [k, v] of Object.entries(rec.basics)) {
      expect(BASIC_CATEGORIES as readonly string[]).toContain(k);
      expect(typeof v).toBe('number');
    }
    // The number form of the request is accepted too ("shown both as a string and as a number").
    await answer('/api/vet', post({ dot_number: dots[1], broker_id: 'contract' }), 200, vettingRecord);
  });

  it('GET /api/vetting answers the history (records) and one record by id with snapshot_json', async () => {
    const rec = await answer('/api/vet', post({ dot_number: dots[2], broker_id: 'contract' }), 200, vettingRecord);
    const history = await answer(`/api/vetting?dot=${dots[2]}`, undefined, 200, nested(vettingRecord, 'records[].'));
    expect(history.records.length).toBeGreaterThan(0);
    await answer(`/api/vetting?id=${rec.vetting_id}`, undefined, 200, vettingRecordById);
  });

  it('POST /api/vet-preview answers the same types without a record id', async () => {
    const preview: ContractTable = { ...vettingRecord, fields: vettingRecord.fields.filter((f) => f.path !== 'vetting_id') };
    const p = await answer('/api/vet-preview', post({ dot_number: dots[3], broker_id: 'contract' }), 200, preview);
    expect(p.vetting_id).toBeNull();
  });

  it('POST /api/batch-vet answers a vetting record per carrier', async () => {
    const b = await answer(
      '/api/batch-vet',
      post({ dot_numbers: [dots[0], String(dots[1])], broker_id: 'contract-batch' }),
      200,
      nested(vettingRecord, 'results[].record.'),
    );
    expect(b.results).toHaveLength(2);
  });

  it('GET /api/plans publishes the plans of the Limits table', async () => {
    const p = await answer('/api/plans', undefined, 200, plans);
    expect(p.plans.map((x: { plan: string }) => x.plan)).toEqual(['free', 'payg', 'pack_100', 'pack_500', 'enterprise']);
  });
});

describe('spec 001 contract: carrier intelligence (bodies not shown: JSON answers)', () => {
  it('answers search, safety, crashes (by DOT and by VIN), inspections and enforcement', async () => {
    await answer(`/api/carriers?name=${encodeURIComponent('hauling')}`, undefined, 200, null);
    await answer(`/api/carriers?dot=${dots[0]}`, undefined, 200, null);
    await answer(`/api/carriers?state=IN`, undefined, 200, null);
    const safety = await answer(`/api/safety?dot=${dots[0]}`, undefined, 200, null);
    expect(safety.basics).toHaveLength(7);
    expect(typeof safety.sms_data_available).toBe('boolean');
    await answer(`/api/crashes?dot=${dots[0]}`, undefined, 200, null);
    await answer(`/api/crashes?vin=${encodeURIComponent(vin)}`, undefined, 200, null);
    await answer(`/api/inspections?dot=${dots[0]}`, undefined, 200, null);
    await answer(`/api/enforcement?dot=${dots[0]}`, undefined, 200, null);
  });

  it('answers status (with a database version) and attestation (root hash, table hashes, provenance)', async () => {
    const s = await answer('/api/status', undefined, 200, null);
    expect(s.database_version).toBeTruthy();
    const a = await answer('/api/attestation', undefined, 200, null);
    expect(a.root_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Array.isArray(a.tables) && Array.isArray(a.provenance)).toBe(true);
  });
});

describe('spec 001 contract: proof of care', () => {
  it('creates a document, appends custody events, lists, views and verifies it', async () => {
    const v = await answer('/api/vet', post({ dot_number: dots[0], broker_id: 'care-contract' }), 200, vettingRecord);
    const doc = await answer(
      '/api/care',
      post({
        shipment: { ref: 'BOL-1', commodity: 'steel coils', value_usd: 48000 },
        parties: { broker: 'care-contract', carrier: v.carrier },
        vetting_id: v.vetting_id,
      }),
      201,
      careCreated,
    );
    expect(doc.document_id).toMatch(/^POGC-/);
    const id = doc.document_id;
    await answer(`/api/care/${id}/event`, post({ stage: 'TENDER', actor: 'dispatcher', evidence: {} }), 201, null);
    await answer(
      `/api/care/${id}/event`,
      post({ stage: 'PICKUP_HANDOFF', actor: 'driver', evidence: { condition: 'good', seal_number: 'S-1', pieces: 12 } }),
      201,
      null,
    );
    const list = await answer('/api/care', undefined, 200, null);
    expect(JSON.stringify(list)).toContain(id);
    const page = await w.svc.app.fetch(new Request(`http://proofline.test/api/care/${id}`));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    await answer(`/api/care/${id}.json`, undefined, 200, null);
    const verdict = await answer(`/api/care/${id}/verify`, undefined, 200, careVerification);
    expect(verdict).toMatchObject({ valid: true, events_verified: 2, problems: [] });
  });
});
