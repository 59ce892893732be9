import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { StateStore } from '../../service/platform/state.store.ts';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { checkStageOrder, verifyChain } from '../../service/care/care.chain.ts';

const post = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const newDoc = {
  shipment: { ref: 'BOL-1001', commodity: 'frozen shrimp', value_usd: 182500 },
  parties: { broker: 'acme-brokerage', carrier: { name: 'VERIHA TRUCKING INC', dot_number: 158121 } },
};

const itRun = it;

describe.each(STATE_BACKENDS)('proof of care ($name state store)', ({ skip, open }) => {
  let dir: string;
  let svc: TestService;
  let state: StateStore;
  let dispose: () => Promise<void>;
  let file: string | undefined;
  const it = skip ? itRun.skip : itRun;

  beforeAll(async () => {
    if (skip) return;
    dir = await tempDir();
    ({ store: state, dispose, file } = await open());
    svc = await buildTestService(testConfig(dir), [], { state });
  });
  afterAll(async () => {
    if (skip) return;
    await svc.close();
    await state.close().catch(() => undefined); // the tamper test may have reopened it
    await dispose();
    await removeDir(dir);
  });

  it('answers a retried POST with the same Idempotency-Key with the first answer, once', async () => {
    const withKey = (key: string, body: unknown) => ({
      ...post(body),
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
    });
    const first = await getJson(svc.app, '/api/care', withKey('create-1', newDoc));
    expect(first.status).toBe(201);
    const again = await getJson(svc.app, '/api/care', withKey('create-1', newDoc));
    expect(again.status).toBe(201);
    expect(again.body.document_id).toBe(first.body.document_id);
    const id = first.body.document_id;
    const event = { stage: 'TENDER', actor: 'dispatch', evidence: {} };
    const [e1, e2] = await Promise.all([
      getJson(svc.app, `/api/care/${id}/event`, withKey('ev-1', event)),
      getJson(svc.app, `/api/care/${id}/event`, withKey('ev-1', event)).catch(() => null),
    ]);
    // Two racing requests with one key: one runs; the other gets its answer or 409 (still in flight), never a second event.
    expect(e1.status).toBe(201);
    expect([201, 409]).toContain(e2!.status);
    const retry = await getJson(svc.app, `/api/care/${id}/event`, withKey('ev-1', event));
    expect(retry.status).toBe(201);
    expect(retry.body.hash).toBe(e1.body.hash);
    const doc = await getJson(svc.app, `/api/care/${id}.json`);
    expect(doc.body.document.event_count).toBe(1);
    const reused = await getJson(svc.app, `/api/care/${id}/event`, withKey('ev-1', { ...event, actor: 'someone else' }));
    expect(reused.status).toBe(400);
    expect(reused.body.parameter).toBe('Idempotency-Key');
  });

  it('creates a document and chains events from the creation record', async () => {
    const c = await getJson(svc.app, '/api/care', post(newDoc));
    expect(c.status).toBe(201);
    expect(c.body.document_id).toMatch(/^POGC-\d{8}-[0-9A-F]{12}$/);
    const id = c.body.document_id;
    const e1 = await getJson(
      svc.app,
      `/api/care/${id}/event`,
      post({ stage: 'TENDER', actor: { name: 'Dispatcher Ann', role: 'broker' }, evidence: { rate_confirmation_sha256: 'ab'.repeat(32) } }),
    );
    expect(e1.status).toBe(201);
    expect(e1.body).toMatchObject({ seq: 1, stage: 'TENDER', prev_hash: c.body.creation_hash });
    const e2 = await getJson(
      svc.app,
      `/api/care/${id}/event`,
      post({ stage: 'PICKUP_HANDOFF', actor: 'driver J. Ruiz', evidence: { seal: 'SL-778812', temp_f: -4 } }),
    );
    expect(e2.body).toMatchObject({ seq: 2, prev_hash: e1.body.hash });
    const v = await getJson(svc.app, `/api/care/${id}/verify`);
    expect(v.body).toMatchObject({ valid: true, events_verified: 2, problems: [] });
    const j = await getJson(svc.app, `/api/care/${id}.json`);
    expect(j.status).toBe(200);
    expect(j.body.document).toMatchObject({ document_id: id, event_count: 2, head_hash: e2.body.hash, last_stage: 'PICKUP_HANDOFF' });
    expect(j.body.events.map((e: { stage: string }) => e.stage)).toEqual(['TENDER', 'PICKUP_HANDOFF']);
    const list = await getJson(svc.app, '/api/care?limit=5');
    expect(list.body.documents.some((d: { document_id: string }) => d.document_id === id)).toBe(true);
  });

  it('lists documents newest first, paging by keyset cursor with next and Link rel="next"', async () => {
    for (let n = 0; n < 3; n++) expect((await getJson(svc.app, '/api/care', post(newDoc))).status).toBe(201);
    const all = (await getJson(svc.app, '/api/care?limit=500')).body;
    expect(all.next).toBeNull();
    const seen: string[] = [];
    let url: string | null = '/api/care?limit=2';
    while (url) {
      const page = await getJson(svc.app, url);
      expect(page.status).toBe(200);
      seen.push(...page.body.documents.map((d: { document_id: string }) => d.document_id));
      expect(page.headers.get('link')).toBe(page.body.next ? `<${page.body.next}>; rel="next"` : null);
      url = page.body.next ? new URL(page.body.next).pathname + new URL(page.body.next).search : null;
    }
    expect(seen).toEqual(all.documents.map((d: { document_id: string }) => d.document_id));
    expect(new Set(seen).size).toBe(all.count);
  });

  it('serves a printable HTML page with the discovery link', async () => {
    const c = await getJson(svc.app, '/api/care', post(newDoc));
    const res = await svc.app.fetch(new Request(`http://proofline.test/api/care/${c.body.document_id}`));
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('link')).toContain('rel="ai-discovery"');
    const html = await res.text();
    expect(html).toContain('<link rel="ai-discovery" type="application/json" href="/.well-known/ai">');
    expect(html).toContain(c.body.document_id);
    expect(html).toContain('BOL-1001');
  });

  it('enforces the stage order rules with 409', async () => {
    const { body } = await getJson(svc.app, '/api/care', post(newDoc));
    const id = body.document_id;
    const bad = await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: 'x', evidence: {} }));
    expect(bad.status).toBe(409);
    expect(bad.body.error).toContain('first event must be TENDER');
    for (const stage of ['TENDER', 'PICKUP_HANDOFF', 'IN_TRANSIT', 'EXCEPTION', 'DELIVERY_HANDOFF']) {
      expect((await getJson(svc.app, `/api/care/${id}/event`, post({ stage, actor: 'x', evidence: {} }))).status).toBe(201);
    }
    expect((await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: 'x' }))).status).toBe(409);
    expect((await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'CLOSED', actor: 'x' }))).status).toBe(201);
    expect((await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'EXCEPTION', actor: 'x' }))).status).toBe(409);
    expect((await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'LOST', actor: 'x' }))).status).toBe(400);
  });

  it('rejects a vetting_id that does not exist, bad bodies and unknown documents', async () => {
    const r = await getJson(svc.app, '/api/care', post({ ...newDoc, vetting_id: 'VET-20260101-000000000000' }));
    expect(r.status).toBe(404);
    expect(r.body.vetting_id).toBe('VET-20260101-000000000000');
    expect((await getJson(svc.app, '/api/care', post({ shipment: { ref: 'x' } }))).status).toBe(400);
    expect((await getJson(svc.app, '/api/care/POGC-20260101-FFFFFFFFFFFF/verify')).status).toBe(404);
    expect((await getJson(svc.app, '/api/care/nope/verify')).status).toBe(400);
  });

  it('has no update or delete path for events', async () => {
    const { body } = await getJson(svc.app, '/api/care', post(newDoc));
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const r = await svc.app.fetch(new Request(`http://proofline.test/api/care/${body.document_id}/event`, { method }));
      expect([404, 405]).toContain(r.status);
    }
  });

  it('serialises concurrent appends to one document into one unforked chain', async () => {
    const { body } = await getJson(svc.app, '/api/care', post(newDoc));
    const id = body.document_id;
    await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'TENDER', actor: 'a' }));
    await getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'PICKUP_HANDOFF', actor: 'a' }));
    const rs = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        getJson(svc.app, `/api/care/${id}/event`, post({ stage: 'IN_TRANSIT', actor: 'gps', evidence: { ping: i } })),
      ),
    );
    expect(rs.every((r) => r.status === 201)).toBe(true);
    const seqs = rs.map((r) => r.body.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => i + 3));
    expect(new Set(rs.map((r) => r.body.prev_hash)).size).toBe(60);
    const v = await getJson(svc.app, `/api/care/${id}/verify`);
    expect(v.body).toMatchObject({ valid: true, events_verified: 62 });
  });

  it('reports a tampered byte, a removed event and a forged hash', async () => {
    const { body } = await getJson(svc.app, '/api/care', post(newDoc));
    const id = body.document_id;
    for (const stage of ['TENDER', 'PICKUP_HANDOFF', 'IN_TRANSIT'])
      await getJson(svc.app, `/api/care/${id}/event`, post({ stage, actor: 'a', evidence: { seal: 'SL-1' } }));
    const other = (await getJson(svc.app, '/api/care', post(newDoc))).body.document_id;
    for (const stage of ['TENDER', 'PICKUP_HANDOFF']) await getJson(svc.app, `/api/care/${other}/event`, post({ stage, actor: 'a' }));
    const tamper = `UPDATE care_events SET evidence_json = replace(evidence_json, 'SL-1', 'SL-7') WHERE document_id = '${id}' AND seq = 2`;
    const remove = `DELETE FROM care_events WHERE document_id = '${other}' AND seq = 2`;
    if (file) {
      // Close the server's store, then edit rows through a separate connection, as an attacker with file access would.
      await state.close();
      const db = await DuckDBInstance.create(file);
      const conn = await db.connect();
      await conn.run(tamper);
      await conn.run(remove);
      conn.closeSync();
      db.closeSync();
      state = await StateStore.open(file);
      svc.deps.state = state;
    } else {
      // PostgreSQL: an attacker with database access edits rows around the service.
      await state.write(async (tx) => {
        await tx.write(tamper);
        await tx.write(remove);
      });
    }
    const v = await getJson(svc.app, `/api/care/${id}/verify`);
    expect(v.body.valid).toBe(false);
    expect(v.body.events_verified).toBe(1);
    expect(v.body.problems).toEqual([expect.objectContaining({ seq: 2, code: 'hash_mismatch' })]);
    const v2 = await getJson(svc.app, `/api/care/${other}/verify`);
    expect(v2.body.valid).toBe(false);
    expect(v2.body.problems.map((p: { code: string }) => p.code).sort()).toEqual(['count_mismatch', 'head_mismatch']);
    const html = await (await svc.app.fetch(new Request(`http://proofline.test/api/care/${id}`))).text();
    expect(html).toContain('Chain NOT verified');
  });
});

describe('checkStageOrder', () => {
  it('requires TENDER first and nothing after CLOSED', () => {
    expect(checkStageOrder([], 'PICKUP_HANDOFF')).toMatch(/first event must be TENDER/);
    expect(checkStageOrder(['TENDER'], 'EXCEPTION')).toBeNull();
    expect(checkStageOrder(['TENDER', 'EXCEPTION'], 'CLOSED')).toBeNull();
    expect(checkStageOrder(['TENDER'], 'CLOSED')).toMatch(/CLOSED needs/);
    expect(checkStageOrder(['TENDER', 'EXCEPTION', 'CLOSED'], 'EXCEPTION')).toMatch(/CLOSED/);
  });
});

describe('verifyChain', () => {
  it('flags whitespace added to stored JSON as not canonical', () => {
    const doc = {
      document_id: 'POGC-1',
      created_at: 't',
      shipment_json: '{"ref":"a"}',
      parties_json: '{ "broker":"b"}',
      vetting_id: null,
      vetting_data_hash: null,
      creation_hash: 'x',
      event_count: 0,
      head_hash: 'x',
    };
    const r = verifyChain(doc, []);
    expect(r.valid).toBe(false);
    expect(r.problems.map((p) => p.code)).toContain('not_canonical');
  });
});
