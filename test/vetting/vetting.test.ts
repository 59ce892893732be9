import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, hashCanonical, sha256Hex } from '../../lib/hash.ts';
import { tableFilePath } from '../../service/attestation/attestation.queries.ts';
import { verifyCanonical } from '../../lib/keys.ts';
import { verifyLeaf } from '../../lib/origin.ts';
import { grantCredits, issueApiKey, runCreditsCommand } from '../../service/vetting/credits.ts';
import { createLiveRefresher } from '../../service/vetting/live-refresh.ts';
import { recordFromStored } from '../../service/vetting/vetting.queries.ts';
import { getJson } from '../helpers/app.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { buildWorld, WORLD_CARRIERS, type World } from './fmcsa-world.ts';

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

// The whole suite runs on both state backends (issue 20): vetting records with snapshot_json, credits and grants, API
// keys, batch charges and care bindings on the embedded DuckDB file and on PostgreSQL (skipped with a notice without it).
describe.each(STATE_BACKENDS)('vetting ($name state store)', (backend) => {
  describe.skipIf(backend.skip)('on this backend', () => {
    let w: World;
    let dots: number[];
    const keys: Record<string, string> = {};
    beforeAll(async () => {
      w = await buildWorld({}, {}, backend);
      // Keys are issued before the first request: the API layer reads the key file when it starts (then every 2 s).
      await grantCredits(w.state, 'acme-paid', 5, 'payg', new Date());
      await grantCredits(w.state, 'bigco', 0, 'enterprise', new Date());
      await grantCredits(w.state, 'small-pack', 3, 'payg', new Date());
      for (const a of ['acme-paid', 'bigco', 'small-pack']) keys[a] = (await issueApiKey(w.state, w.config.dataDir, a, new Date())).api_key;
      const rows = await w.svc.deps.readers.fmcsa!.query('SELECT dot_number FROM carriers ORDER BY dot_number LIMIT 12');
      dots = rows.map((r) => Number(r.dot_number));
    }, 120_000);
    afterAll(async () => w?.close());

    describe('POST /api/vet', () => {
      it('creates a signed vetting record whose data_hash is the SHA-256 of the stored snapshot_json', async () => {
        const r = await getJson(w.svc.app, '/api/vet', post({ dot_number: String(dots[0]), broker_id: 'acme' }));
        expect(r.status).toBe(200);
        const rec = r.body;
        expect(rec.vetting_id).toMatch(/^VET-\d{8}-[0-9A-F]{12}$/);
        expect(rec).toMatchObject({
          dot_number: dots[0],
          broker_id: 'acme',
          snapshot_available: true,
          live_refresh: { status: 'not_configured' },
        });
        expect(['LOW', 'MODERATE', 'HIGH', 'CRITICAL']).toContain(rec.risk_level);
        expect(['APPROVE', 'CAUTION', 'REJECT']).toContain(rec.recommendation);
        // Spec 001 types: carrier a string, red_flags strings, basics numbers keyed by snake_case category.
        expect(rec.carrier).toBe(rec.carrier_detail.legal_name);
        expect(rec.red_flags).toEqual(rec.red_flags_detail.map((f: { message: string }) => f.message));
        for (const [k, v] of Object.entries(rec.basics)) {
          expect(k).toMatch(/^[a-z_]+$/);
          expect(typeof v).toBe('number');
        }
        expect(rec.basics_detail.map((b: { category: string }) => b.category)).toEqual([
          'unsafe_driving',
          'hours_of_service_compliance',
          'driver_fitness',
          'controlled_substances_alcohol',
          'vehicle_maintenance',
          'hazardous_materials_compliance',
          'crash_indicator',
        ]);
        expect(new Date(rec.vetting_date).toISOString()).toBe(rec.vetting_date);
        expect(rec.credits).toMatchObject({ account_id: 'broker:acme', plan: 'free', balance: 29, charged: 1 });
        const one = await getJson(w.svc.app, `/api/vetting?id=${rec.vetting_id}`);
        expect(one.status).toBe(200);
        expect(sha256Hex(one.body.snapshot_json)).toBe(rec.data_hash);
        const snap = JSON.parse(one.body.snapshot_json);
        // The stored text is the RFC 8785 form of the snapshot (its features are spliced from the origin leaf's hashing).
        expect(canonicalJson(snap)).toBe(one.body.snapshot_json);
        expect(snap.carrier_risk_origin.record_sha256).toBe(hashCanonical(snap.features));
        expect(snap.inputs.length).toBeGreaterThan(0);
        // data_hash → snapshot → the carrier_risk row's origin leaf → the published parquet file (docs/provenance.md).
        const leaf = snap.carrier_risk_origin;
        expect(leaf).toMatchObject({ kind: 'snapshot', source: 'fmcsa/carrier_risk' });
        expect(verifyLeaf(leaf)).toBe(true);
        expect(leaf.record_sha256).toBe(hashCanonical(snap.features));
        const parquet = readFileSync(tableFilePath(w.config.dataDir, snap.warehouse.snapshot_id, 'carrier_risk'));
        expect(leaf.content_sha256).toBe(sha256Hex(parquet));
        for (const i of snap.inputs)
          expect(Object.keys(i)).toEqual(expect.arrayContaining(['dataset', 'as_of', 'retrieved_at', 'content_sha256']));
        // The signature covers the record fields; `credits` and the API layer's `usage_meta` are not part of it.
        const { signature, credits: _c, usage_meta: _u, ...signed } = rec;
        expect(verifyCanonical(w.svc.deps.signingKey!.publicKey, signed, signature.value)).toBe(true);
        expect(verifyCanonical(w.svc.deps.signingKey!.publicKey, { ...signed, risk_score: signed.risk_score + 1 }, signature.value)).toBe(
          false,
        );
      });

      it('names FMCSA as the source in usage_meta, and SAFER as the place to confirm a carrier', async () => {
        for (const path of [`/api/carrier/${dots[0]}`, `/api/vetting?dot=${dots[0]}`]) {
          const r = await getJson(w.svc.app, path);
          expect(r.status, path).toBe(200);
          expect(r.body.usage_meta.source, path).toMatch(/FMCSA/);
          expect(r.body.usage_meta.trust_status, path).toMatch(/safer\.fmcsa\.dot\.gov/);
          expect(r.body.usage_meta.license_notice, path).toMatch(/^FMCSA data is a U\.S\. government work/);
        }
      });

      it('accepts the DOT as a number and lists history newest first', async () => {
        const a = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[1], broker_id: 'acme' }));
        const b = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[1], broker_id: 'other' }));
        expect(a.status).toBe(200);
        const h = await getJson(w.svc.app, `/api/vetting?dot=${dots[1]}`);
        expect(h.body.count).toBe(2);
        expect(h.body.records.map((x: { vetting_id: string }) => x.vetting_id).sort()).toEqual(
          [a.body.vetting_id, b.body.vetting_id].sort(),
        );
        expect(h.body.records[0].snapshot_json).toBeUndefined();
      });

      it('pages a carrier\'s history newest first by keyset cursor: every record exactly once, Link rel="next"', async () => {
        const ids: string[] = [];
        for (const broker of ['p1', 'p2', 'p3']) {
          const r = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[3], broker_id: broker }));
          expect(r.status).toBe(200);
          ids.push(r.body.vetting_id);
        }
        const seen: string[] = [];
        let url: string | null = `/api/vetting?dot=${dots[3]}&limit=1`;
        while (url) {
          const page = await getJson(w.svc.app, url);
          expect(page.status).toBe(200);
          seen.push(...page.body.records.map((x: { vetting_id: string }) => x.vetting_id));
          expect(page.headers.get('link')).toBe(page.body.next ? `<${page.body.next}>; rel="next"` : null);
          url = page.body.next ? new URL(page.body.next).pathname + new URL(page.body.next).search : null;
        }
        expect(seen.length).toBe(3);
        expect([...seen].sort()).toEqual([...ids].sort());
        expect((await getJson(w.svc.app, `/api/vetting?dot=${dots[3]}&cursor=bogus`)).body).toMatchObject({
          status: 400,
          parameter: 'cursor',
        });
      });

      it('answers 404 for an unknown carrier without charging, 400 for bad input', async () => {
        const r = await getJson(w.svc.app, '/api/vet', post({ dot_number: 99_999_998, broker_id: 'acme-404' }));
        expect(r.status).toBe(404);
        expect((await getJson(w.svc.app, '/api/vet', post({ dot_number: 'abc', broker_id: 'acme' }))).status).toBe(400);
        expect((await getJson(w.svc.app, '/api/vet', post({ dot_number: 1 }))).status).toBe(400);
        expect((await getJson(w.svc.app, '/api/vetting')).status).toBe(400);
        expect((await getJson(w.svc.app, '/api/vetting?id=VET-20260101-000000000000')).status).toBe(404);
      });
    });

    describe('records stored before the spec 001 types', () => {
      it('are served in the contract shape, the signed stored form kept beside as signed_record', () => {
        const legacy = {
          vetting_id: 'VET-20261120-000000000001',
          dot_number: 7,
          broker_id: 'old',
          carrier: { dot_number: 7, legal_name: 'OLD CARRIER LLC' },
          risk_score: 20,
          risk_level: 'MODERATE',
          recommendation: 'CAUTION',
          red_flags: [{ code: 'X', severity: 'medium', message: 'Something.' }],
          basics: [
            { basic: 'Unsafe Driving', measure: 1.5, percentile: null, threshold: 65, exceeded: false, alert: null },
            { basic: 'Crash Indicator', measure: null, percentile: null, threshold: 65, exceeded: false, alert: null },
          ],
          snapshot_available: true,
        };
        const r = recordFromStored(JSON.stringify(legacy));
        expect(r).toMatchObject({
          carrier: 'OLD CARRIER LLC',
          carrier_detail: legacy.carrier,
          red_flags: ['Something.'],
          red_flags_detail: legacy.red_flags,
          basics: { unsafe_driving: 1.5 },
          signed_record: legacy,
        });
        expect(r.basics_detail.map((b) => b.category)).toEqual(['unsafe_driving', 'crash_indicator']);
        // Records in the contract shape are served as stored.
        const current = { ...legacy, carrier: 'OLD CARRIER LLC', red_flags: ['Something.'], basics: { unsafe_driving: 1.5 } };
        expect(recordFromStored(JSON.stringify(current))).toEqual(current);
      });
    });

    describe('POST /api/vet-preview', () => {
      it('computes the same assessment without a record or a credit', async () => {
        const p = await getJson(w.svc.app, '/api/vet-preview', post({ dot_number: dots[2] }));
        expect(p.status).toBe(200);
        expect(p.body).toMatchObject({ preview: true, vetting_id: null, snapshot_available: false, dot_number: dots[2] });
        expect(sha256Hex(p.body.snapshot_json)).toBe(p.body.data_hash);
        const v = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[2], broker_id: 'preview-check' }));
        expect(v.body).toMatchObject({
          risk_score: p.body.risk_score,
          risk_level: p.body.risk_level,
          recommendation: p.body.recommendation,
          red_flags: p.body.red_flags,
        });
        expect(v.body.credits.balance).toBe(29);
        expect((await getJson(w.svc.app, `/api/vetting?dot=${dots[2]}`)).body.count).toBe(1);
      });
    });

    describe('credits', () => {
      it('gives a free account 30 credits, then answers 402 with a clear body', async () => {
        const broker = 'free-runner';
        for (let i = 0; i < 30; i++)
          expect((await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[i % dots.length], broker_id: broker }))).status).toBe(200);
        const r = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[0], broker_id: broker }));
        expect(r.status).toBe(402);
        expect(r.body).toMatchObject({ status: 402, account_id: `broker:${broker}`, balance: 0, required: 1 });
        expect(r.body.error).toMatch(/insufficient credits/);
        // Previews stay free.
        expect((await getJson(w.svc.app, '/api/vet-preview', post({ dot_number: dots[0], broker_id: broker }))).status).toBe(200);
      });

      it('never double-spends under concurrent requests', async () => {
        const broker = 'racer';
        const rs = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            getJson(w.svc.app, '/api/vet', post({ dot_number: dots[i % dots.length], broker_id: broker })),
          ),
        );
        expect(rs.filter((r) => r.status === 200)).toHaveLength(30);
        expect(rs.filter((r) => r.status === 402)).toHaveLength(10);
      });

      it('charges an API key account, unlimited for enterprise, 401 for an unknown key', async () => {
        const key = keys['acme-paid'];
        const r = await getJson(
          w.svc.app,
          '/api/vet',
          post({ dot_number: dots[3], broker_id: 'acme' }, { authorization: `Bearer ${key}` }),
        );
        expect(r.body.credits).toMatchObject({ account_id: 'acme-paid', plan: 'payg', balance: 4 });
        const ek = keys.bigco;
        const e = await getJson(
          w.svc.app,
          '/api/vet',
          post({ dot_number: dots[3], broker_id: 'bigco' }, { authorization: `Bearer ${ek}` }),
        );
        expect(e.body.credits).toMatchObject({ plan: 'enterprise', balance: null, charged: 1 });
        expect(
          (await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[3], broker_id: 'x' }, { authorization: 'Bearer pl_nope' }))).status,
        ).toBe(401);
      });
    });

    describe('plans and purchases (spec 001 Limits)', () => {
      it('publishes the five plans with their prices at /api/plans and on /docs/rules', async () => {
        const r = await getJson(w.svc.app, '/api/plans');
        expect(r.status).toBe(200);
        expect(r.body.currency).toBe('USD');
        expect(r.body.plans.map((p: any) => [p.plan, p.price_usd, p.usd_per_credit, p.lookups, p.purchase_credits, p.batch_limit])).toEqual(
          [
            ['free', 0, 0, 'unlimited', null, 10],
            ['payg', null, 10, 'unlimited', { min: 1, max: 99 }, 100],
            ['pack_100', 900, 9, 'unlimited', { min: 100, max: 100 }, 100],
            ['pack_500', 4000, 8, 'unlimited', { min: 500, max: 500 }, 500],
            ['enterprise', null, null, 'unlimited', null, null],
          ],
        );
        expect(r.body.rules.join(' ')).toMatch(/never expire/);
        const docs = await w.svc.app.fetch(new Request('http://proofline.test/docs/rules'));
        const html = await docs.text();
        expect(html).toContain('id="vetting-plans"');
        for (const price of ['$10 per record', '$900 ($9 per record)', '$4,000 ($8 per record)', 'volume pricing'])
          expect(html).toContain(price);
      });

      it('sells pay-as-you-go 1 to 99 credits and the packs exactly 100 and 500; anything else is a 400 naming the field', async () => {
        const buy = (account: string, n: number, plan?: 'free' | 'payg' | 'pack_100' | 'pack_500' | 'enterprise') =>
          runCreditsCommand(w.state, w.config.dataDir, { op: 'grant', account, n, plan }).then(
            (ok) => ({ ok }),
            (e) => ({ status: e.httpStatus, parameter: e.context?.response?.parameter, message: e.message }),
          );
        expect(await buy('buyer-1', 1, 'payg')).toHaveProperty('ok');
        expect(await buy('buyer-2', 99, 'payg')).toHaveProperty('ok');
        expect(await buy('buyer-3', 100, 'pack_100')).toHaveProperty('ok');
        expect(await buy('buyer-4', 500, 'pack_500')).toHaveProperty('ok');
        expect(await buy('buyer-5', 2500, 'enterprise')).toHaveProperty('ok');
        for (const [n, plan] of [
          [0, 'payg'],
          [100, 'payg'],
          [99, 'pack_100'],
          [101, 'pack_100'],
          [400, 'pack_500'],
          [1_000_000, 'pack_500'],
        ] as const)
          expect(await buy(`bad-${plan}-${n}`, n, plan), `${n} on ${plan}`).toMatchObject({ status: 400, parameter: 'n' });
        expect(await buy('bad-free', 30, 'free')).toMatchObject({ status: 400, parameter: 'plan' });
        // Another purchase on an existing account follows its plan: a second 100-pack, not 7 credits.
        expect(await buy('buyer-3', 7)).toMatchObject({ status: 400, parameter: 'n' });
        expect(await buy('buyer-3', 100)).toMatchObject({ ok: { account: { plan: 'pack_100', balance: 200 } } });
        // Over HTTP (the CLI's path while the server runs): the same rule, a 400 naming the field.
        w.svc.deps.options.adminToken = 'admin-secret';
        try {
          const admin = { authorization: 'Bearer admin-secret' };
          const http = await getJson(w.svc.app, '/admin/credits', post({ op: 'grant', account: 'bad-http', n: 150, plan: 'payg' }, admin));
          expect(http).toMatchObject({ status: 400, body: { parameter: 'n', min: 1, max: 99, requested: 150 } });
          expect(http.body.error).toMatch(/1 to 99 credits/);
          const ok = await getJson(
            w.svc.app,
            '/admin/credits',
            post({ op: 'grant', account: 'buyer-http', n: 500, plan: 'pack_500' }, admin),
          );
          expect(ok).toMatchObject({ status: 200, body: { account: { plan: 'pack_500', balance: 500 } } });
        } finally {
          w.svc.deps.options.adminToken = undefined;
        }
        const refused = await w.state.query("SELECT count(*)::INTEGER AS n FROM accounts WHERE account_id LIKE 'bad-%'");
        expect(refused[0]!.n).toBe(0);
      });

      it('does not cap an Enterprise batch at 1,000', async () => {
        const many = Array.from({ length: 1001 }, (_, i) => (i < 2 ? dots[9 + i]! : 'x'));
        const r = await getJson(
          w.svc.app,
          '/api/batch-vet',
          post({ dot_numbers: many, broker_id: 'bigco' }, { authorization: `Bearer ${keys.bigco}` }),
        );
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ requested: 1001, succeeded: 2, failed: 999, credits: { plan: 'enterprise', charged: 2 } });
      });
    });

    describe('POST /api/batch-vet', () => {
      it('reports per-DOT results and charges one credit per record made', async () => {
        const r = await getJson(
          w.svc.app,
          '/api/batch-vet',
          post({ dot_numbers: [dots[4], String(dots[5]), 99_999_997, 'x1'], broker_id: 'batcher' }),
        );
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ requested: 4, succeeded: 2, failed: 2, credits: { balance: 28, charged: 2 } });
        expect(r.body.results.map((x: { status: string; http_status?: number }) => x.http_status ?? x.status)).toEqual([
          'ok',
          'ok',
          404,
          400,
        ]);
        expect(r.body.results[0].record.vetting_id).toMatch(/^VET-/);
      });

      it('answers a batch in which every DOT is invalid with per-DOT 400s and no charge', async () => {
        const r = await getJson(w.svc.app, '/api/batch-vet', post({ dot_numbers: [0, '1e3'], broker_id: 'all-invalid' }));
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ requested: 2, succeeded: 0, failed: 2, credits: { balance: 30, charged: 0 } });
        expect(r.body.results.map((x: { http_status: number }) => x.http_status)).toEqual([400, 400]);
      });

      it('enforces the plan batch limit and checks the whole batch against the balance first', async () => {
        const big = await getJson(w.svc.app, '/api/batch-vet', post({ dot_numbers: dots.slice(0, 11), broker_id: 'batch-limit' }));
        expect(big.status).toBe(400);
        expect(big.body).toMatchObject({ plan: 'free', batch_limit: 10 });
        const key = keys['small-pack'];
        const short = await getJson(
          w.svc.app,
          '/api/batch-vet',
          post({ dot_numbers: dots.slice(0, 4), broker_id: 'small' }, { authorization: `Bearer ${key}` }),
        );
        expect(short.status).toBe(402);
        expect(short.body).toMatchObject({ balance: 3, required: 4 });
        const vetted = await w.state.query("SELECT count(*)::INTEGER AS n FROM vetting_records WHERE account_id = 'small-pack'");
        expect(vetted[0]!.n).toBe(0);
      });
    });

    describe('live refresh', () => {
      let server: Server;
      let url: string;
      let mode: 'fixture' | 'hang' = 'hang';
      beforeAll(async () => {
        server = createServer((_req, res) => {
          if (mode === 'hang') return; // never answers: the refresher must time out
          const body = readFileSync(fixture('fmcsa/qcmobile/carriers_158121.json'));
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        });
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/qc/services`;
      });
      afterAll(async () => {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      });

      it('records a fallback to the warehouse when QCMobile times out', async () => {
        mode = 'hang';
        w.svc.deps.liveRefresher = createLiveRefresher({
          FMCSA_WEBKEY: 'secret-key',
          FMCSA_BASE_URL: url,
          FMCSA_TIMEOUT_MS: 200,
          HTTP_USER_AGENT: 'test',
        });
        try {
          const r = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[6], broker_id: 'live' }));
          expect(r.status).toBe(200);
          expect(r.body.live_refresh.status).toBe('fallback');
          expect(r.body.live_refresh.reason).toMatch(/timeout/);
          const snap = (await getJson(w.svc.app, `/api/vetting?id=${r.body.vetting_id}`)).body.snapshot_json;
          expect(snap).toContain('"status":"fallback"');
          expect(snap).not.toContain('secret-key');
        } finally {
          w.svc.deps.liveRefresher = null;
        }
      });

      it.skipIf(!HAS_SHARED)('overlays the live QCMobile carrier and records it as an input', async () => {
        mode = 'fixture';
        w.svc.deps.liveRefresher = createLiveRefresher({
          FMCSA_WEBKEY: 'secret-key',
          FMCSA_BASE_URL: url,
          FMCSA_TIMEOUT_MS: 2000,
          HTTP_USER_AGENT: 'test',
        });
        try {
          const r = await getJson(w.svc.app, '/api/vet-preview', post({ dot_number: dots[7] }));
          expect(r.body.live_refresh.status).toBe('refreshed');
          expect(r.body.carrier).toBe('VERIHA TRUCKING INC');
          expect(r.body.carrier_detail).toMatchObject({ legal_name: 'VERIHA TRUCKING INC', allowed_to_operate: 'Y', safety_rating: 'S' });
          const snap = JSON.parse(r.body.snapshot_json);
          const live = snap.inputs.find((i: { dataset: string }) => i.dataset === 'qcmobile/carriers');
          expect(live).toMatchObject({
            as_of: '2021-02-28T06:33:31.490+0000',
            content_sha256: sha256Hex(readFileSync(fixture('fmcsa/qcmobile/carriers_158121.json'))),
          });
          expect(live.retrieved_at).toMatch(/^\d{4}-/);
          expect(r.body.snapshot_json).not.toContain('secret-key');
        } finally {
          w.svc.deps.liveRefresher = null;
        }
      });
    });

    describe('GET /api/status and /api/attestation', () => {
      it('reports record counts per dataset and table, as-of dates and versions', async () => {
        const s = await getJson(w.svc.app, '/api/status');
        expect(s.status).toBe(200);
        expect(s.body.status).toBe('ok');
        expect(s.body.database_version).toMatchObject({
          duckdb: expect.stringMatching(/^v?\d/),
          fmcsa_snapshot_id: w.svc.deps.readers.fmcsa!.manifest!.snapshot_id,
          risk_model: expect.any(String),
        });
        expect(s.body.tables.find((t: { table: string }) => t.table === 'carriers').rows).toBe(WORLD_CARRIERS);
        expect(s.body.datasets.datasets.length).toBeGreaterThan(0);
        expect(s.body.datasets.datasets[0]).toHaveProperty('as_of');
        expect(s.body.state.vetting_records).toBeGreaterThan(0);
      });

      it('gives a signed root hash anyone can recompute from the published table files', async () => {
        const a = await getJson(w.svc.app, '/api/attestation');
        expect(a.status).toBe(200);
        const recomputed: Record<string, string> = {};
        for (const t of a.body.tables) {
          const bytes = readFileSync(tableFilePath(w.config.dataDir, a.body.snapshot_id, t.table));
          expect(sha256Hex(bytes)).toBe(t.sha256);
          recomputed[t.table] = sha256Hex(bytes);
        }
        expect(hashCanonical(recomputed)).toBe(a.body.root_hash);
        expect(a.body.provenance.length).toBeGreaterThan(0);
        for (const p of a.body.provenance) expect(p.content_sha256).toMatch(/^[a-f0-9]{64}$/);
        // The chain reaches tables: the census file's rows went into carriers.
        expect(a.body.provenance.find((p: { path: string | null }) => p.path?.includes('Company_Census_File'))?.tables).toContain(
          'carriers',
        );
        const { signature, usage_meta: _u, ...body } = a.body;
        expect(verifyCanonical(w.svc.deps.signingKey!.publicKey, body, signature.value)).toBe(true);
      });
    });

    describe('care documents bound to a vetting record', () => {
      it('binds the vetting data_hash into the creation record', async () => {
        const v = await getJson(w.svc.app, '/api/vet', post({ dot_number: dots[8], broker_id: 'care-binder' }));
        const c = await getJson(
          w.svc.app,
          '/api/care',
          post({
            shipment: { ref: 'BOL-9', commodity: 'produce', value_usd: 12000 },
            parties: { broker: 'care-binder', carrier: { dot_number: dots[8] } },
            vetting_id: v.body.vetting_id,
          }),
        );
        expect(c.status).toBe(201);
        expect(c.body).toMatchObject({ vetting_id: v.body.vetting_id, vetting_data_hash: v.body.data_hash });
        expect((await getJson(w.svc.app, `/api/care/${c.body.document_id}/verify`)).body.valid).toBe(true);
      });
    });

    describe('golden vetting preview', () => {
      it('keeps the record shape and the assessment of a sample carrier stable', async () => {
        const p = await getJson(w.svc.app, '/api/vet-preview', post({ dot_number: dots[0] }));
        // Volatile: the time of the vetting (and so the snapshot bytes and their hash) and the API layer's usage_meta.
        const { vetting_date: _d, data_hash: _h, snapshot_json: _s, usage_meta: _u, ...stable } = p.body;
        await expect(JSON.stringify(stable, null, 2) + '\n').toMatchFileSnapshot('../golden/vetting/preview-first-carrier.json');
      });
    });
  });
});
