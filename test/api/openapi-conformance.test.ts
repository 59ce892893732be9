/**
 * /openapi.json cannot drift from the answers (docs/architecture.md#openapi-and-docs): every JSON route the
 * document describes is called live, in one scripted session over the small registry, quotes, transcripts and
 * FMCSA samples with a state store (vetting, care, monitoring, webhooks, credits), and its answer is parsed with
 * the route's zod response schema, the one its named component is generated from. The schemas are strict enough
 * that a renamed or retyped field fails: every served field is named with its type, nullable only where the answer
 * can be null. No JSON route is left with a bare `{type: object}` 200 body; the error body is one shared
 * component; and the document passes `redocly lint` with the recommended rules (@redocly/cli, a dev dependency).
 *
 * OPENAPI_DUMP=<dir> writes each live answer to <dir> (to write or review a schema).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgarSampleGenerator } from '../../ingest/edgar/edgar.sample.ts';
import { generateFmcsaSample } from '../../ingest/fmcsa/fmcsa.sample.ts';
import { quotesSampleGenerator } from '../../ingest/quotes/quotes.sample.ts';
import { transcriptsSampleGenerator } from '../../ingest/transcripts/transcripts.sample.ts';
import { fmcsaPipeline } from '../../jobs/fmcsa/fmcsa.pipeline.ts';
import { quotesPipeline } from '../../jobs/quotes/quotes.pipeline.ts';
import { registryPipeline } from '../../jobs/registry/registry.pipeline.ts';
import { ensureSample } from '../../jobs/sample.ts';
import { transcriptsPipeline } from '../../jobs/transcripts/transcripts.pipeline.ts';
import { emitEvent } from '../../service/monitoring/webhooks.queries.ts';
import { listRoutes, type RouteDoc } from '../../service/platform/route-registry.ts';
import { StateStore, stateDbPath } from '../../service/platform/state.store.ts';
import { buildTestService, getJson, ingestAll, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { REPO_ROOT } from '../helpers/shared.ts';

const ADMIN = 'conformance-admin-token';
const BROKER = 'conformance-broker';
const RECEIVER = 'http://127.0.0.1:9';

/** Values later requests take from earlier answers. */
type Ctx = Record<string, string>;
interface Sample {
  /** `METHOD /openapi/path` of the described route. */
  route: string;
  path: string;
  body?: unknown;
  admin?: boolean;
  headers?: Record<string, string>;
  /** More requests of the same route (other tickers, carriers, parameters), checked the same way. */
  also?: string[];
  /** Reads values for later requests from this answer. */
  keep?: (body: any, c: Ctx) => void | Promise<void>;
}

/** One live request per described JSON route, in order; `{name}` is replaced from the context. */
const SAMPLES: Sample[] = [
  {
    route: 'GET /api/red-flags',
    path: '/api/red-flags?limit=200',
    also: ['/api/red-flags?min_risk=HIGH&safety_rating=S&limit=1000', '/api/red-flags?code=INSURANCE_BELOW_REQUIRED&state=TX'],
    keep: (b, c) => void (c.dot = String(b.results[0].dot_number)),
  },
  {
    route: 'GET /api/company/{ticker}',
    path: '/api/company/AAPL',
    also: ['/api/company/MSFT?detail=full', '/api/company/NVDA'],
    keep: (b, c) => void (c.leaf = b.origin.leaf_hash),
  },
  {
    route: 'GET /api/company/{ticker}/profile',
    path: '/api/company/AAPL/profile?detail=full',
    also: [
      '/api/company/MSFT/profile?detail=full',
      '/api/company/NVDA/profile?detail=full',
      '/api/company/AAPL/profile',
      '/api/company/AAPL/profile?origins=full',
    ],
  },
  {
    route: 'GET /api/company/{ticker}/timeline',
    path: '/api/company/AAPL/timeline?limit=5',
    also: [
      '/api/company/MSFT/timeline?limit=5',
      '/api/company/NVDA/timeline?limit=5',
      '/api/company/AAPL/timeline?detail=full&origins=full&limit=300',
    ],
  },
  {
    route: 'GET /api/company/{ticker}/filings',
    path: '/api/company/AAPL/filings?limit=5',
    also: ['/api/company/MSFT/filings?limit=5', '/api/company/NVDA/filings?limit=5', '/api/company/AAPL/filings?form=8-K&limit=2000'],
  },
  {
    route: 'GET /api/company/{ticker}/earnings',
    path: '/api/company/AAPL/earnings',
    also: ['/api/company/MSFT/earnings', '/api/company/NVDA/earnings'],
  },
  {
    route: 'GET /api/company/{ticker}/people',
    path: '/api/company/AAPL/people',
    keep: (b, c) => void (c.person = encodeURIComponent(b.executives[0].name)),
  },
  { route: 'GET /api/person/{name}', path: '/api/person/{person}', also: ['/api/person/jo'] },
  {
    route: 'GET /api/company/{ticker}/quote',
    path: '/api/company/AAPL/quote',
    also: ['/api/company/MSFT/quote', '/api/company/NVDA/quote', '/api/company/AAPL/quote?adjustment=raw'],
  },
  {
    route: 'GET /api/company/{ticker}/quote/history',
    path: '/api/company/AAPL/quote/history?limit=5',
    also: [
      '/api/company/MSFT/quote/history?limit=5',
      '/api/company/NVDA/quote/history?limit=5',
      '/api/company/AAPL/quote/history?limit=100000',
    ],
  },
  {
    route: 'GET /api/company/{ticker}/transcripts',
    path: '/api/company/AAPL/transcripts',
    also: ['/api/company/MSFT/transcripts', '/api/company/NVDA/transcripts'],
  },
  {
    route: 'GET /api/company/{ticker}/facts',
    path: '/api/company/AAPL/facts?limit=5',
    also: ['/api/company/MSFT/facts?limit=5', '/api/company/NVDA/facts?limit=5', '/api/company/AAPL/facts?type=guidance'],
  },
  {
    route: 'GET /api/search/transcripts',
    path: '/api/search/transcripts?topic=ai&limit=5',
    also: ['/api/search/transcripts?topic=ai&first=true', '/api/search/transcripts?type=metric'],
  },
  { route: 'GET /api/signals', path: '/api/signals', also: ['/api/signals?limit=20', '/api/signals?ticker=AAPL'] },
  { route: 'GET /api/search', path: '/api/search?q=micro', also: ['/api/search?q=apple&limit=100', '/api/search?q=chief'] },
  { route: 'GET /api/stats', path: '/api/stats' },
  { route: 'GET /api/ir/rankings', path: '/api/ir/rankings', also: ['/api/ir/rankings?days=100000&limit=100000'] },
  { route: 'GET /api/verify/{leaf_hash}', path: '/api/verify/{leaf}' },
  { route: 'GET /.well-known/proofline-keys.json', path: '/.well-known/proofline-keys.json' },
  { route: 'GET /api/carriers', path: '/api/carriers?state=TX&limit=50', also: ['/api/carriers?name=tr&limit=100'] },
  {
    route: 'GET /api/carrier/{dot}',
    path: '/api/carrier/{dot}',
    also: ['/api/carrier/1001466', '/api/carrier/1000392', '/api/carrier/1001264', '/api/carrier/1000029', '/api/carrier/1002875'],
  },
  {
    route: 'GET /api/carrier/{dot}/snapshot',
    path: '/api/carrier/{dot}/snapshot',
    also: [
      '/api/carrier/1001466/snapshot',
      '/api/carrier/1000392/snapshot',
      '/api/carrier/1001264/snapshot',
      '/api/carrier/1000029/snapshot',
      '/api/carrier/1002875/snapshot',
    ],
  },
  {
    route: 'GET /api/safety',
    path: '/api/safety?dot={dot}',
    also: [
      '/api/safety?dot=1001466',
      '/api/safety?dot=1000392',
      '/api/safety?dot=1001264',
      '/api/safety?dot=1000029',
      '/api/safety?dot=1002875',
    ],
  },
  {
    route: 'GET /api/crashes',
    path: '/api/crashes?dot={dot}',
    also: [
      '/api/crashes?dot={dot}&limit=1000',
      '/api/crashes?dot=1001466',
      '/api/crashes?dot=1000392',
      '/api/crashes?dot=1001264',
      '/api/crashes?dot=1000029',
      '/api/crashes?dot=1002875',
    ],
  },
  {
    route: 'GET /api/inspections',
    path: '/api/inspections?dot={dot}',
    also: [
      '/api/inspections?dot={dot}&limit=1000',
      '/api/inspections?dot=1001466',
      '/api/inspections?dot=1000392',
      '/api/inspections?dot=1001264',
      '/api/inspections?dot=1000029',
      '/api/inspections?dot=1002875',
    ],
  },
  {
    route: 'GET /api/enforcement',
    path: '/api/enforcement?dot={dot}',
    also: [
      '/api/enforcement?dot=1001466',
      '/api/enforcement?dot=1000392',
      '/api/enforcement?dot=1001264',
      '/api/enforcement?dot=1000029',
      '/api/enforcement?dot=1002875',
    ],
  },
  { route: 'GET /api/fmcsa/status', path: '/api/fmcsa/status' },
  { route: 'GET /api/export', path: '/api/export' },
  { route: 'GET /api/attestation', path: '/api/attestation' },
  { route: 'GET /api/status', path: '/api/status' },
  { route: 'GET /api/health', path: '/api/health' },
  { route: 'GET /api/ready', path: '/api/ready' },
  { route: 'GET /api/plans', path: '/api/plans' },
  // Webhooks first, so the custody event below is delivered to the broker's endpoint.
  {
    route: 'POST /api/webhooks',
    path: '/api/webhooks',
    body: { url: `${RECEIVER}/hook`, event_types: ['care.event', 'carrier.changed'], broker_id: BROKER },
    keep: (b, c) => void (c.endpoint = b.endpoint_id),
  },
  { route: 'GET /api/webhooks', path: `/api/webhooks?broker_id=${BROKER}` },
  { route: 'POST /api/vet-preview', path: '/api/vet-preview', body: { dot_number: '{dot}' } },
  {
    route: 'POST /api/vet',
    path: '/api/vet',
    body: { dot_number: '{dot}', broker_id: BROKER },
    keep: (b, c) => void (c.vetting = b.vetting_id),
  },
  { route: 'GET /api/vetting', path: '/api/vetting?dot={dot}' },
  { route: 'POST /api/batch-vet', path: '/api/batch-vet', body: { dot_numbers: ['{dot}'], broker_id: BROKER } },
  {
    route: 'POST /api/care',
    path: '/api/care',
    body: {
      shipment: { ref: 'BOL-1001', commodity: 'frozen shrimp', value_usd: 182500 },
      parties: { broker: BROKER, carrier: { name: 'a carrier', dot_number: '{dot}' } },
      vetting_id: '{vetting}',
    },
    keep: (b, c) => void (c.care = b.document_id),
  },
  {
    route: 'POST /api/care/{id}/event',
    path: '/api/care/{care}/event',
    body: { stage: 'TENDER', actor: 'dispatch', evidence: { note: 'x' } },
  },
  { route: 'GET /api/care', path: '/api/care?limit=5' },
  { route: 'GET /api/care/{id}/verify', path: '/api/care/{care}/verify' },
  {
    route: 'GET /api/webhooks/deliveries',
    path: `/api/webhooks/deliveries?broker_id=${BROKER}`,
    keep: (b, c) => void (c.delivery = b.deliveries[0].delivery_id),
  },
  { route: 'GET /api/webhooks/deliveries/{id}', path: `/api/webhooks/deliveries/{delivery}?broker_id=${BROKER}` },
  { route: 'POST /api/webhooks/deliveries/{id}/redeliver', path: `/api/webhooks/deliveries/{delivery}/redeliver?broker_id=${BROKER}` },
  { route: 'PATCH /api/webhooks/{id}', path: `/api/webhooks/{endpoint}?broker_id=${BROKER}`, body: { status: 'active' } },
  { route: 'DELETE /api/webhooks/{id}', path: `/api/webhooks/{endpoint}?broker_id=${BROKER}` },
  { route: 'POST /api/watchlist', path: '/api/watchlist', body: { dot_numbers: ['{dot}'], broker_id: BROKER } },
  { route: 'GET /api/watchlist', path: `/api/watchlist?broker_id=${BROKER}` },
  { route: 'GET /api/monitoring/events', path: `/api/monitoring/events?broker_id=${BROKER}` },
  { route: 'GET /api/monitoring/settings', path: `/api/monitoring/settings?broker_id=${BROKER}` },
  { route: 'POST /api/monitoring/settings', path: '/api/monitoring/settings', body: { auto_watch: true, broker_id: BROKER } },
  { route: 'DELETE /api/watchlist/{dot}', path: `/api/watchlist/{dot}?broker_id=${BROKER}` },
  {
    route: 'POST /admin/webhooks',
    path: '/admin/webhooks',
    admin: true,
    body: { url: `${RECEIVER}/operator`, event_types: ['run.published', 'run.failed'] },
    keep: async (b, c) => {
      c.opEndpoint = b.endpoint_id;
      // A published run, as the pipeline's run notice emits it, so the operator has a delivery to read.
      await emitEvent(
        svc.deps.state!,
        undefined,
        { message_id: 'msg_run_conformance', type: 'run.published', data: { domain: 'fmcsa' }, accounts: ['operator'] },
        new Date(),
      );
    },
  },
  { route: 'GET /admin/webhooks', path: '/admin/webhooks', admin: true },
  {
    route: 'GET /admin/webhooks/deliveries',
    path: '/admin/webhooks/deliveries',
    admin: true,
    keep: (b, c) => void (c.opDelivery = b.deliveries[0].delivery_id),
  },
  { route: 'GET /admin/webhooks/deliveries/{id}', path: '/admin/webhooks/deliveries/{opDelivery}', admin: true },
  { route: 'POST /admin/webhooks/deliveries/{id}/redeliver', path: '/admin/webhooks/deliveries/{opDelivery}/redeliver', admin: true },
  { route: 'PATCH /admin/webhooks/{id}', path: '/admin/webhooks/{opEndpoint}', admin: true, body: { status: 'active' } },
  { route: 'DELETE /admin/webhooks/{id}', path: '/admin/webhooks/{opEndpoint}', admin: true },
  {
    route: 'POST /admin/credits',
    path: '/admin/credits',
    admin: true,
    body: { op: 'grant', account: 'conformance-paid', n: 5, plan: 'payg' },
  },
  { route: 'GET /.well-known/ai', path: '/.well-known/ai' },
  { route: 'GET /.well-known/archive', path: '/.well-known/archive' },
  { route: 'GET /ai/knowledge.json', path: '/ai/knowledge.json' },
  { route: 'GET /ai/feed.json', path: '/ai/feed.json' },
  { route: 'GET /ai/pages.json', path: '/ai/pages.json' },
  { route: 'GET /ai/query', path: '/ai/query' },
  { route: 'POST /ai/query', path: '/ai/query', body: { q: 'AAPL', type: 'company' } },
  { route: 'GET /ai/schemas/ai-discovery-1.1.1.json', path: '/ai/schemas/ai-discovery-1.1.1.json' },
  { route: 'GET /openapi.json', path: '/openapi.json' },
  {
    route: 'POST /mcp',
    path: '/mcp',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sec_company', arguments: { ticker: 'AAPL' } } },
    headers: { accept: 'application/json, text/event-stream' },
  },
];

/** Described JSON routes not called here, and why. */
const NOT_CALLED: Record<string, string> = {};

function fill(s: string, c: Ctx): string {
  return s.replace(/\{(\w+)\}/g, (m, k: string) => c[k] ?? m);
}
function fillBody(v: unknown, c: Ctx): unknown {
  if (typeof v === 'string') return fill(v, c);
  if (Array.isArray(v)) return v.map((x) => fillBody(x, c));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillBody(x, c)]));
  return v;
}
/** Paths of the members of `served` that `parsed` (the schema's output) dropped. */
function unnamedFields(served: unknown, parsed: unknown, at = ''): string[] {
  if (Array.isArray(served) && Array.isArray(parsed)) return served.flatMap((v, i) => unnamedFields(v, parsed[i], `${at}[]`));
  if (!served || typeof served !== 'object' || !parsed || typeof parsed !== 'object') return [];
  const out = new Set<string>();
  for (const [k, v] of Object.entries(served as Record<string, unknown>)) {
    const path = at ? `${at}.${k}` : k;
    if (!(k in (parsed as Record<string, unknown>))) out.add(path);
    else for (const u of unnamedFields(v, (parsed as Record<string, unknown>)[k], path)) out.add(u);
  }
  return [...out];
}

/**
 * Null when some top-level field of `answer` (non-null), renamed and then retyped, each fails `schema`; otherwise
 * why the schema lets such a change through.
 */
function vacuousOn(schema: z.ZodType, answer: unknown): string | null {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return null;
  const { usage_meta: _u, ...body } = answer as Record<string, unknown>;
  for (const [k, v] of Object.entries(body)) {
    if (v === null || v === undefined) continue;
    const { [k]: _drop, ...rest } = body;
    if (schema.safeParse({ ...rest, [`${k}_renamed`]: v }).success) continue;
    const other = typeof v === 'string' ? 12345 : 'retyped';
    if (schema.safeParse({ ...body, [k]: other }).success) return `'${k}' retyped to ${JSON.stringify(other)} still parses`;
    return null;
  }
  return 'no top-level field is required';
}
const isJson = (r: RouteDoc) => !r.contentType || r.contentType === 'application/json';

let root: string;
let svc: TestService;
beforeAll(async () => {
  root = await tempDir('proofline-conformance-');
  const inputDir = path.join(root, 'in');
  await ensureSample(inputDir, {
    scale: 'small',
    seed: 42,
    generators: [
      edgarSampleGenerator,
      quotesSampleGenerator,
      transcriptsSampleGenerator,
      { name: 'fmcsa', generate: (o) => generateFmcsaSample({ ...o, carriers: 3000 }) },
    ],
  });
  const config = testConfig(path.join(root, 'data'));
  await ingestAll(config, [registryPipeline, quotesPipeline, transcriptsPipeline, fmcsaPipeline], inputDir);
  const state = await StateStore.open(stateDbPath(config.dataDir));
  svc = await buildTestService(config, ['registry', 'quotes', 'transcripts', 'fmcsa'], { state });
  svc.deps.options.adminToken = ADMIN;
  svc.deps.options.webhookPrivateOrigins = [RECEIVER];
}, 600_000);
afterAll(async () => {
  await svc?.close();
  await svc?.deps.state?.close().catch(() => undefined);
  await removeDir(root);
});

describe('OpenAPI conformance', { timeout: 300_000 }, () => {
  it('answers every described JSON route the way its response schema says', async () => {
    await getJson(svc.app, '/openapi.json'); // every family has registered and described its routes
    const routes = new Map(listRoutes().map((r) => [`${r.method} ${r.path}`, r]));
    const dump = process.env.OPENAPI_DUMP;
    if (dump) mkdirSync(dump, { recursive: true });
    const c: Ctx = {};
    const failures: string[] = [];
    const weak: string[] = [];
    for (const s of SAMPLES) {
      const r = routes.get(s.route);
      expect(r, `${s.route} is not a described route`).toBeDefined();
      const headers: Record<string, string> = { ...s.headers, ...(s.admin ? { authorization: `Bearer ${ADMIN}` } : {}) };
      if (s.body !== undefined) headers['content-type'] = 'application/json';
      let first: any;
      for (const [i, p] of [s.path, ...(s.also ?? [])].entries()) {
        const res = await getJson(svc.app, fill(p, c), {
          method: r!.method,
          headers,
          ...(s.body !== undefined ? { body: JSON.stringify(fillBody(s.body, c)) } : {}),
        });
        if (dump) writeFileSync(path.join(dump, `${s.route.replace(/[^A-Za-z0-9]+/g, '_')}.${i}.json`), JSON.stringify(res.body, null, 1));
        expect(res.status, `${s.route} ${p}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(r!.status ?? 200);
        const { usage_meta: _u, ...body } = res.body as Record<string, unknown>;
        if (!r!.response) failures.push(`${s.route}: no response schema`);
        else {
          const parsed = r!.response.safeParse(body);
          if (!parsed.success) failures.push(`${s.route} ${p}: ${JSON.stringify(parsed.error.issues.slice(0, 4))}`);
          else {
            // Every served field is named: parsing drops the members a schema does not name (loose objects keep them).
            const unnamed = unnamedFields(body, parsed.data);
            if (unnamed.length) failures.push(`${s.route} ${p}: fields the schema does not name: ${unnamed.slice(0, 8).join(', ')}`);
          }
        }
        first ??= res.body;
      }
      // Not vacuous: a top-level field of the first answer, renamed or retyped, breaks the schema.
      const weakness = r!.response ? vacuousOn(r!.response, first) : null;
      if (weakness) weak.push(`${s.route}: ${weakness}`);
      await s.keep?.(first, c);
    }
    expect(failures).toEqual([]);
    expect(weak).toEqual([]);
    // Every described JSON route is called above, or named in NOT_CALLED with the reason.
    const called = new Set(SAMPLES.map((s) => s.route));
    const missing = [...routes.values()].filter(
      (r) => isJson(r) && !called.has(`${r.method} ${r.path}`) && !NOT_CALLED[`${r.method} ${r.path}`],
    );
    expect(missing.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it('gives every JSON route a named response schema: no bare {type: object} 200 body; the error body is one shared component', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body;
    const bare: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>))
      for (const [method, op] of Object.entries(ops)) {
        const ok = op.responses['200'] ?? op.responses['201'];
        const json = ok.content?.['application/json'];
        if (!json) continue;
        const ref = json.schema.$ref as string;
        expect(ref, `${method} ${p}`).toMatch(/^#\/components\/schemas\/\w+Response$/);
        const schema = doc.components.schemas[ref.split('/').pop()!];
        expect(schema, ref).toBeDefined();
        // The body's own schema (metered routes wrap it in allOf with usage_meta) names its fields.
        const own = schema.allOf ? schema.allOf[0] : schema;
        if (!own.properties && !own.anyOf && !own.oneOf && own.type !== 'array') bare.push(`${method.toUpperCase()} ${p}`);
        for (const [status, r] of Object.entries(op.responses as Record<string, any>))
          if (!status.startsWith('2') && r.content) expect(r.content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
      }
    expect(bare).toEqual([]);
    expect(JSON.stringify(doc.components.schemas.GetApiRedFlagsResponse)).toContain('"CRITICAL"');
  });

  it('passes redocly lint with the recommended rules', async () => {
    const doc = (await getJson(svc.app, '/openapi.json')).body;
    const file = path.join(root, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'node_modules/@redocly/cli/bin/cli.js'), 'lint', file, '--extends', 'recommended', '--format', 'stylish'],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`.slice(-3000)).toBe(0);
    // No warning at all (the two no-ambiguous-paths warnings went with PATCH …/webhooks/{id}; docs/architecture.md).
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/^\s*\d+:\d+\s+warning\b/m);
  });
});
