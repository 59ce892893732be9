/**
 * Every list route pages (docs/architecture.md#pagination): a GET route of /openapi.json whose answer holds a list
 * (an array member, at the top or one object down, as search's `results.companies`) declares the `limit` and
 * `cursor` query parameters and answers `next_cursor` and `next`, unless it is named below as a document or record
 * that is not a list, with the reason. A new unpaged list route fails here until it pages or is named.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.ts';
import { createApp } from '../../service/app.ts';
import { getJson } from '../helpers/app.ts';

/** GET routes whose arrays are parts of one document or record, not a list to walk. */
const NOT_LISTS: Record<string, string> = {
  '/.well-known/ai': 'the discovery manifest, a document of spec 002 (its arrays are sections of it)',
  '/.well-known/archive': 'the discovery archive index of spec 002 (one document, shape fixed by the spec)',
  '/.well-known/proofline-keys.json': 'the receipt signing key set (one document, every key a verifier needs)',
  '/ai/feed.json': 'the discovery feed of spec 002 (one document, shape fixed by the spec)',
  '/ai/knowledge.json': 'the knowledge file of spec 002 (one document)',
  '/ai/pages.json': 'the page manifest of spec 002 (one document)',
  '/ai/schemas/ai-discovery-1.1.1.json': 'a JSON Schema document',
  '/openapi.json': 'this API description',
  '/api/attestation': "one signed attestation over the current snapshots' tables",
  '/api/care/{id}/verify': "one custody chain's verification (its problems)",
  '/api/carrier/{dot}': "one carrier's record (its authority and insurance rows)",
  '/api/carrier/{dot}/snapshot': "one carrier's risk snapshot (its inputs)",
  '/api/company/{ticker}': 'the identity card (its tags)',
  '/api/company/{ticker}/profile':
    'layer 1, a summary at a token budget (spec 000); its people page at /people, its events at /timeline, its filings at /filings',
  '/api/company/{ticker}/quote': 'one quote (its flags)',
  '/api/person/{name}': "one person's career record (spec 000 person career); other_matches is capped at 10",
  '/api/export': 'the tables of the current snapshots (one per published table)',
  '/api/fmcsa/status': 'the FMCSA status document (datasets, sources, rejects of the served snapshot)',
  '/api/health': 'liveness (its reasons)',
  '/api/ready': 'readiness (its reasons)',
  '/api/plans': 'the plan and rule catalogue',
  '/api/safety': "one carrier's safety record (its seven BASICs)",
  '/api/enforcement': "one carrier's enforcement record (its OOS orders, cases and revocations; spec 001)",
  '/api/verify/{leaf_hash}': "one signed receipt (the leaf's parent chain, walked to its source)",
  '/api/status': 'the service status (its domains and tables)',
  '/api/webhooks/deliveries/{id}': "one delivery's record (its attempt log, bounded by the retry schedule)",
  '/admin/webhooks/deliveries/{id}': "one delivery's record (its attempt log, bounded by the retry schedule)",
};

type Json = Record<string, any>;

/** Names of the array members of a body schema: at the top, or one object member down (`results.companies`). */
function arrayMembers(schema: Json, doc: Json, depth = 0): string[] {
  const s = schema?.$ref ? doc.components.schemas[String(schema.$ref).split('/').pop()!] : schema;
  if (!s) return [];
  if (s.allOf) return s.allOf.flatMap((x: Json) => arrayMembers(x, doc, depth));
  const out: string[] = [];
  for (const [name, p] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
    const variants = [p, ...(p.anyOf ?? []), ...(p.oneOf ?? [])];
    if (variants.some((v) => v.type === 'array')) out.push(name);
    else if (depth === 0 && variants.some((v) => v.type === 'object' && v.properties))
      out.push(...arrayMembers(variants.find((v) => v.properties)!, doc, 1).map((n) => `${name}.${n}`));
  }
  return out;
}

/** Top-level member names of a body schema (through allOf and $ref). */
function membersOf(schema: Json, doc: Json): string[] {
  const s = schema?.$ref ? doc.components.schemas[String(schema.$ref).split('/').pop()!] : schema;
  if (!s) return [];
  if (s.allOf) return s.allOf.flatMap((x: Json) => membersOf(x, doc));
  return Object.keys(s.properties ?? {});
}

describe('every list route pages', () => {
  it('declares limit and cursor and answers next_cursor and next on every GET route whose answer holds a list', async () => {
    const app = createApp({
      readers: {},
      log: silentLogger,
      now: () => new Date(),
      startedAt: new Date(),
      options: { publicBaseUrl: 'http://proofline.test', snapshotStaleHours: 48, version: '0.0.0-test', dataDir: '/nonexistent' },
    });
    const doc = (await getJson(app, '/openapi.json')).body as Json;
    const unpaged: string[] = [];
    const paged: string[] = [];
    const seen = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Json>)) {
      const op = ops.get as Json | undefined;
      if (!op) continue;
      const body = op.responses?.['200']?.content?.['application/json']?.schema;
      if (!body) continue;
      const arrays = arrayMembers(body, doc);
      if (arrays.length === 0) continue;
      seen.add(path);
      if (NOT_LISTS[path]) continue;
      const params = new Set((op.parameters as Json[]).filter((p) => p.in === 'query').map((p) => p.name as string));
      const members = new Set(membersOf(body, doc));
      const missing = [
        ...['limit', 'cursor'].filter((p) => !params.has(p)).map((p) => `parameter ${p}`),
        ...['next_cursor', 'next'].filter((m) => !members.has(m)).map((m) => `member ${m}`),
      ];
      if (missing.length) unpaged.push(`GET ${path} (lists ${arrays.join(', ')}): no ${missing.join(', ')}`);
      else paged.push(path);
    }
    expect(unpaged).toEqual([]);
    // The routes paged since issue 21 are among them, and every exemption names a route that holds arrays.
    for (const p of [
      '/api/red-flags',
      '/api/company/{ticker}/quote/history',
      '/api/search',
      '/api/search/transcripts',
      '/api/company/{ticker}/people',
      '/api/company/{ticker}/earnings',
      '/api/company/{ticker}/transcripts',
      '/api/company/{ticker}/facts',
      '/api/ir/rankings',
      '/api/watchlist',
      '/api/monitoring/events',
      '/api/webhooks',
      '/api/webhooks/deliveries',
    ])
      expect(paged).toContain(p);
    expect(Object.keys(NOT_LISTS).filter((p) => !seen.has(p))).toEqual([]);
  });
});
