/**
 * The real published files of the standard's authors (../shared/fixtures/discovery):
 * our verifier gives exactly the verdicts in expected-hashes.json, parses their
 * drift leniently with warnings, and discovers them when served by a local site.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discover, verifyDocument } from '../../lib/discovery/index.ts';
import { checkFileConformance, checkManifestConformance } from '../../lib/discovery/manifest.schema.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { serveSite, type Site } from './discovery-helpers.ts';

const read = (rel: string) => readFileSync(fixture(`discovery/${rel}`), 'utf8');
const OBSERVED = '2026-11-22T00:00:00.000Z';

describe.skipIf(!HAS_SHARED)('verifyDocument on the real fixture files', () => {
  const expected = HAS_SHARED
    ? (JSON.parse(read('expected-hashes.json')) as { files: Record<string, { published: string | null; jcs: string; matches: string[] }> })
        .files
    : {};

  it.each(Object.keys(expected))('%s gives the expected verdict', (rel) => {
    const e = expected[rel];
    const v = verifyDocument(JSON.parse(read(rel)), `https://example.test/${rel}`, { observedAt: OBSERVED });
    expect(v.hash.computed).toBe(e.jcs);
    expect(v.hash.published).toBe(e.published);
    // our rule is RFC 8785 only: no legacy variant ever counts as a match
    expect(v.hash.status).toBe(e.published === null ? 'absent' : e.published === e.jcs ? 'match' : 'mismatch');
    expect(v.hash.legacyMethod).toBe(
      e.matches.includes('legacyReplacerArray')
        ? 'legacy-replacer-array'
        : e.matches.includes('insertionOrderCompact')
          ? 'insertion-order-compact'
          : null,
    );
    expect(v.originVerified).toBe(false);
    expect(v.timestamps.observedAt).toBe(OBSERVED);
  });

  it('reports the rootz files as tier 3 claims without signature bytes, origin claimed', () => {
    const v = verifyDocument(JSON.parse(read('rootz-ai-discovery-spec/ai.json')), 'https://rootz.global/.well-known/ai', {
      observedAt: OBSERVED,
    });
    expect(v.hash.status).toBe('mismatch');
    expect(v.tier).toBe(3);
    expect(v.signature).toMatchObject({
      status: 'absent',
      claimed: '0xD36AAf65a91bB7dc69942cF6B6d1dBa4Ef171664',
      method: 'epistery-domain-v1',
      network: 'polygon',
    });
    expect(v.origin).toBe('claimed');
    expect(v.warnings.join('\n')).toMatch(/claim only/);
  });

  it('ranks unknown assertion types below community', () => {
    const feed = verifyDocument(JSON.parse(read('rootz-ai-discovery-spec/feed.json')), 'x', { observedAt: OBSERVED });
    expect(feed.assertions).toEqual([]); // its items carry no assertionType at all
    expect(feed.assertionWeight).toBeNull();
    const doc = { items: [{ assertionType: 'press-release' }, { assertionType: 'community' }, { assertionType: 'legal' }] };
    const v = verifyDocument(doc, 'x', { observedAt: OBSERVED });
    expect(v.assertions.map((a) => [a.type, a.weight])).toEqual([
      ['unknown', 0.1],
      ['community', 0.2],
      ['legal', 1],
    ]);
    expect(v.assertionWeight).toBe(0.1);
  });
});

describe.skipIf(!HAS_SHARED)('conformance of the real files to the spec 002 types', () => {
  const doc = (rel: string) => JSON.parse(read(rel));

  it("accepts the reference manifest's site map array, string humanReadable and pages capability; names what breaks the spec", () => {
    const issues = checkManifestConformance(doc('rootz-ai-discovery-spec/ai.json'));
    expect(issues.filter((i) => /^(pages|humanReadable|capabilities|organization)/.test(i))).toEqual([]);
    expect(issues.map((i) => i.split(':')[0]).sort()).toEqual(['specVersion', 'standard']);
    const broken = { ...doc('rootz-ai-discovery-spec/ai.json'), pages: { url: '/ai/pages.json' }, humanReadable: { home: '/' } };
    const more = checkManifestConformance(broken).join('\n');
    expect(more).toMatch(/^pages: .*expected array/m);
    expect(more).toMatch(/^humanReadable: .*expected string/m);
  });

  it('finds the reference feed items carry category and tags but no assertionType, and the proof-site feed has no items', () => {
    const ref = checkFileConformance('feed', doc('rootz-ai-discovery-spec/feed.json'));
    expect(ref.length).toBeGreaterThan(0);
    for (const i of ref) expect(i).toMatch(/^items\.\d+\.assertionType: /);
    expect(checkFileConformance('feed', doc('rootz-proof-site/feed.json'))).toEqual([
      'items: Invalid input: expected array, received undefined',
    ]);
  });

  it('accepts the reference knowledge sections (arrays of items with the spec keys) and flags partnerships without partner', () => {
    expect(checkFileConformance('knowledge', doc('rootz-ai-discovery-spec/knowledge.json'))).toEqual([]);
    expect(checkFileConformance('knowledge', doc('rootz-proof-site/knowledge.json')).map((i) => i.split(':')[0])).toEqual(['partnerships']);
  });
});

describe.skipIf(!HAS_SHARED)('discover over the real files served locally', () => {
  let site: Site;
  beforeAll(async () => {
    site = await serveSite();
  });
  afterAll(async () => site.close());
  // Their absolute URLs point at rootz.global hosts: the transport routes those to the local site (no network).
  const viaSite = () => ({
    allowPrivate: true,
    fetch: (u: string | URL | Request, init?: RequestInit) =>
      globalThis.fetch(String(u).replace(/^https:\/\/(proof\.)?rootz\.global/, site.url), init),
    now: () => new Date(OBSERVED),
  });
  const serveJson = (p: string, rel: string) =>
    site.routes.set(p, { status: 200, headers: { 'content-type': 'application/json' }, body: read(rel) });

  it('reads the proof-site manifest leniently: boolean capabilities, concepts, 1.2 paths, no standard', async () => {
    site.routes.clear();
    serveJson('/.well-known/ai', 'rootz-proof-site/well-known-ai.json');
    serveJson('/.well-known/ai/knowledge', 'rootz-proof-site/knowledge.json');
    serveJson('/.well-known/ai/feed', 'rootz-proof-site/feed.json');
    const r = await discover('https://proof.rootz.global/', viaSite());
    expect(r.foundBy).toBe('well-known');
    const w = r.manifest!.warnings.join('\n');
    expect(w).toMatch(/no "standard" member/);
    expect(w).toMatch(/capabilities.knowledge is a boolean/);
    expect(w).toMatch(/"concepts" instead of "coreConcepts"/);
    expect(w).toMatch(/v1.2-style path \(\/\.well-known\/ai\/knowledge\)/);
    expect(w).toMatch(/specVersion 1.2.0 is not 1.1.1/);
    expect(r.manifest!.hash.status).toBe('absent');
    expect(r.manifest!.tier).toBe(1);
    expect(r.manifest!.conformance.issues.join('\n')).toMatch(/^coreConcepts: /m);
    expect(r.manifest!.normalized.capabilities.mcp).toMatchObject({ available: false });
    expect(r.files.map((f) => [f.role, f.verdict?.hash.status])).toEqual([
      ['knowledge', 'absent'],
      ['feed', 'absent'],
    ]);
  });

  it('reads the rootz reference manifest: object standard, 1.2 paths, every published hash a mismatch', async () => {
    site.routes.clear();
    serveJson('/.well-known/ai', 'rootz-ai-discovery-spec/ai.json');
    serveJson('/.well-known/ai/knowledge', 'rootz-ai-discovery-spec/knowledge.json');
    serveJson('/.well-known/ai/feed', 'rootz-ai-discovery-spec/feed.json');
    const r = await discover('https://rootz.global/', viaSite());
    expect(r.foundBy).toBe('well-known');
    expect(r.manifest!.warnings.join('\n')).toMatch(/"standard" is an object/);
    expect(r.manifest!.conformance.valid).toBe(false);
    expect(r.manifest!.conformance.issues.join('\n')).toMatch(/^standard: /m);
    expect(r.manifest!.conformance.issues.join('\n')).toMatch(/^specVersion: /m);
    expect(r.manifest!.hash.status).toBe('mismatch');
    // The site map is read as an array and the page manifest found through capabilities.pages.
    expect(r.manifest!.normalized.siteMap[0]).toEqual({ path: '/', title: 'Home', purpose: 'Company overview and core value proposition' });
    expect(r.manifest!.normalized.pagesUrl).toMatch(/\/ai\/pages\.json$/);
    expect(r.conformance!.valid).toBe(false);
    expect(r.conformance!.issues.join('\n')).toMatch(/^feed: items\.0\.assertionType: /m);
    const knowledge = r.files.find((f) => f.role === 'knowledge')!.verdict!;
    expect(knowledge.hash).toMatchObject({ status: 'mismatch', legacyMethod: 'legacy-replacer-array' });
    expect(r.files.find((f) => f.role === 'feed')!.verdict!.hash.status).toBe('mismatch');
    expect(r.manifest!.warnings.join('\n')).toMatch(/capabilities.knowledge.url uses a v1.2-style path/);
    expect(r.files.find((f) => f.role === 'feed')!.verdict!.warnings.join('\n')).toMatch(/\d+ of \d+ feed items have no assertionType/);
  });
});
