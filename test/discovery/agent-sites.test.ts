/**
 * The agent against local fixture sites (node:http on 127.0.0.1), one per
 * path of the discovery algorithm and per re-verification outcome, with the
 * exact verdicts expected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createBookmark,
  discover,
  generateSecretKey,
  addressFromSecretKey,
  signPersonal,
  reverify,
  type DiscoverOptions,
} from '../../lib/discovery/index.ts';
import { hashOf, html, json, manifestFor, sealed, serveSite, type Site } from './discovery-helpers.ts';

const opts: DiscoverOptions = { allowPrivate: true, timeoutMs: 2000, now: () => new Date('2026-11-22T00:00:00Z') };
let sites: Site[] = [];
afterEach(async () => {
  for (const s of sites) await s.close();
  sites = [];
});
async function site(routes: Parameters<typeof serveSite>[0] = {}): Promise<Site> {
  const s = await serveSite(routes);
  sites.push(s);
  return s;
}

const knowledgeV = (n: number) =>
  sealed({
    specVersion: '1.1.1-draft',
    generated: `2026-11-0${n}T00:00:00Z`,
    summary: { assertionType: 'official-policy', text: `version ${n}` },
  });

describe('discover: algorithm paths', () => {
  it('finds the manifest at the well-known path and verifies its files', async () => {
    const s = await site();
    s.routes.set('/.well-known/ai', json(sealed(manifestFor(s.url))));
    s.routes.set('/ai/knowledge.json', json(knowledgeV(1)));
    const r = await discover(s.url, opts);
    expect(r.found).toBe(true);
    expect(r.foundBy).toBe('well-known');
    expect(r.manifestUrl).toBe(`${s.url}/.well-known/ai`);
    expect(r.manifest!.hash.status).toBe('match');
    expect(r.manifest!.tier).toBe(2);
    expect(r.manifest!.timestamps.observedAt).toBe('2026-11-22T00:00:00.000Z');
    expect(r.files.find((f) => f.role === 'knowledge')!.verdict!.hash.status).toBe('match');
    // the archive capability points at a 404: reported, not fatal
    expect(r.files.find((f) => f.role === 'archive')!.error).toBe('HTTP 404');
  });

  it('falls back to <link rel="ai-discovery"> in the homepage head, skipping text-file look-alikes', async () => {
    const s = await site();
    s.routes.set(
      '/',
      html(`<!doctype html><html><head><!-- <link rel="ai-discovery" href="/commented.json"> -->
<link rel="ai-discovery" type="text/markdown" href="/robots.md">
<link rel="ai-discovery" href="/ai.txt">
<link rel="alternate AI-Discovery" type="application/json" href="meta/ai.json">
</head><body><link rel="ai-discovery" href="/in-body.json"></body></html>`),
    );
    s.routes.set('/ai.txt', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'User-Agent: *\nAllow: /' });
    s.routes.set('/meta/ai.json', json(sealed(manifestFor(s.url))));
    const r = await discover(s.url, opts);
    expect(r.foundBy).toBe('link-tag');
    expect(r.manifestUrl).toBe(`${s.url}/meta/ai.json`);
    expect(r.attempts.map((a) => [a.step, a.outcome])).toEqual([
      ['well-known', 'rejected'],
      ['link-tag', 'rejected'],
      ['link-tag', 'rejected'],
      ['link-tag', 'found'],
    ]);
    expect(r.attempts[1].reason).toMatch(/text\/markdown is not JSON/);
    expect(r.attempts[2].reason).toMatch(/not JSON/);
    expect(s.requests).not.toContain('/commented.json');
    expect(s.requests).not.toContain('/in-body.json');
  });

  it('honours a Link header (RFC 8288: several links, quoting, case, relative target), even on a 404', async () => {
    const s = await site();
    s.routes.set('/.well-known/ai', {
      status: 404,
      headers: {
        'content-type': 'text/plain',
        link: '<https://elsewhere.example/x>; rel="next"; title="a, b", </d/manifest.json>; rel="Preload AI-Discovery"; type="application/json"',
      },
      body: 'nope',
    });
    s.routes.set('/', html('<html><head><title>x</title></head></html>'));
    s.routes.set('/d/manifest.json', json(sealed(manifestFor(s.url))));
    const r = await discover(s.url, opts);
    expect(r.foundBy).toBe('link-header');
    expect(r.manifestUrl).toBe(`${s.url}/d/manifest.json`);
  });

  it('looks at the given page first and then at the homepage', async () => {
    const s = await site();
    s.routes.set('/blog/post', html('<head><title>no link here</title></head>'));
    s.routes.set('/', html('<head><link rel="ai-discovery" type="application/json" href="/m.json"></head>'));
    s.routes.set('/m.json', json(sealed(manifestFor(s.url))));
    const r = await discover(`${s.url}/blog/post`, opts);
    expect(r.foundBy).toBe('link-tag');
    expect(r.manifestUrl).toBe(`${s.url}/m.json`);
    expect(s.requests.slice(0, 3)).toEqual(['/.well-known/ai', '/blog/post', '/']);
  });

  it('reports a malformed target as bad-url', async () => {
    await expect(discover('http://exa mple.com/', opts)).rejects.toMatchObject({ code: 'bad-url' });
    await expect(discover('ftp://example.com/', opts)).rejects.toMatchObject({ code: 'bad-url' });
  });

  it('reports "no manifest" (not an error) when no step finds one', async () => {
    const s = await site({ '/': html('<html><head></head><body>hi</body></html>') });
    const r = await discover(s.url, opts);
    expect(r.found).toBe(false);
    expect(r.foundBy).toBeNull();
    expect(r.attempts.map((a) => a.step)).toEqual(['well-known', 'link-tag', 'link-header']);
  });

  it('rejects a wrong-shape document at the well-known path (IETF draft look-alike) and keeps looking', async () => {
    const s = await site();
    const ietf = { version: '0.1', service: { name: 'Example', description: 'x' }, endpoints: [{ path: '/api', method: 'GET' }] };
    s.routes.set('/.well-known/ai', json(ietf));
    s.routes.set('/', html('<head><link rel="ai-discovery" type="application/json" href="/real.json"></head>'));
    s.routes.set('/real.json', json(sealed(manifestFor(s.url))));
    const r = await discover(s.url, opts);
    expect(r.attempts[0]).toMatchObject({ step: 'well-known', outcome: 'rejected', reason: expect.stringMatching(/organization/) });
    expect(r.foundBy).toBe('link-tag');

    s.routes.delete('/');
    const none = await discover(s.url, opts);
    expect(none.found).toBe(false);
  });

  it('reports a tampered nested value as a hash mismatch', async () => {
    const s = await site();
    const m = sealed(manifestFor(s.url));
    (m.organization as { mission: string }).mission = 'Edited after signing.';
    s.routes.set('/.well-known/ai', json(m));
    const r = await discover(s.url, opts);
    expect(r.manifest!.hash.status).toBe('mismatch');
    expect(r.manifest!.hash.computed).not.toBe(r.manifest!.hash.published);
  });

  it('reports absent for an unsigned manifest (tier 1) with drift warnings', async () => {
    const s = await site();
    s.routes.set(
      '/.well-known/ai',
      json({ version: '1.2.0', organization: { name: 'Drift' }, concepts: ['a'], capabilities: { knowledge: true, mcp_available: false } }),
    );
    const r = await discover(s.url, opts);
    expect(r.manifest!.hash.status).toBe('absent');
    expect(r.manifest!.tier).toBe(1);
    expect(r.manifest!.warnings.join('\n')).toMatch(/"version" instead of "specVersion"/);
    expect(r.manifest!.warnings.join('\n')).toMatch(/"concepts" instead of "coreConcepts"/);
    expect(r.manifest!.warnings.join('\n')).toMatch(/capabilities.knowledge is a boolean/);
  });
});

describe('discover: signatures', () => {
  const keyA = generateSecretKey();
  const keyB = generateSecretKey();
  const tier3 = (doc: Record<string, unknown>, signer: Uint8Array, claimed: Uint8Array) => {
    const contentHash = hashOf(doc);
    return {
      ...doc,
      _signature: {
        contentHash,
        canonicalization: 'RFC8785',
        method: 'eip191-personal-sign-secp256k1',
        digitalName: addressFromSecretKey(claimed),
        network: 'offline',
        signedAt: '2026-11-02T00:00:00Z',
        signature: signPersonal(contentHash, signer),
      },
    };
  };

  it('verifies origin when the signature recovers to digitalName', async () => {
    const s = await site();
    s.routes.set('/.well-known/ai', json(tier3(manifestFor(s.url), keyA, keyA)));
    const r = await discover(s.url, { ...opts, followFiles: false });
    expect(r.manifest!.tier).toBe(3);
    expect(r.manifest!.signature.status).toBe('verified');
    expect(r.manifest!.originVerified).toBe(true);
  });

  it('refuses origin for a signature by another key', async () => {
    const s = await site();
    s.routes.set('/.well-known/ai', json(tier3(manifestFor(s.url), keyB, keyA)));
    const r = await discover(s.url, { ...opts, followFiles: false });
    expect(r.manifest!.tier).toBe(3);
    expect(r.manifest!.hash.status).toBe('match');
    expect(r.manifest!.signature.status).toBe('signer-mismatch');
    expect(r.manifest!.signature.recovered).toBe(addressFromSecretKey(keyB));
    expect(r.manifest!.originVerified).toBe(false);
    expect(r.manifest!.origin).toBe('claimed');
  });
});

describe('discover: the conformance verdict checks the spec 002 types of every file', () => {
  const feedItem = (extra: Record<string, unknown> = {}) => ({
    id: 'i1',
    title: 'Item',
    url: '/news/1',
    published: '2026-11-01T00:00:00Z',
    category: 'news',
    tags: ['a'],
    assertionType: 'editorial',
    summary: 'An item.',
    keyFacts: ['fact'],
    relatedConcepts: ['fixture'],
    ...extra,
  });
  async function publisher(broken: boolean) {
    const s = await site();
    const cap = (url: string) => ({ available: true, url, auth: 'none', rateLimit: 'none', languages: ['en'], safety: 'none' });
    s.routes.set(
      '/.well-known/ai',
      json(
        sealed(
          manifestFor(s.url, {
            capabilities: {
              feed: cap('/ai/feed.json'),
              archive: cap('/.well-known/archive'),
              ...(broken ? {} : { pages: cap('/ai/pages.json') }),
            },
            // Broken: the page manifest pointed at from an object, humanReadable an object.
            pages: broken ? { url: '/ai/pages.json' } : [{ path: '/', title: 'Home', purpose: 'Overview' }],
            humanReadable: broken ? { home: '/' } : `${s.url}/`,
          }),
        ),
      ),
    );
    const item = broken ? feedItem({ category: undefined, tags: 'a,b' }) : feedItem();
    s.routes.set('/ai/feed.json', json(sealed({ specVersion: '1.1.1-draft', items: [item] })));
    const rec = {
      versionId: 'f1',
      resource: '/ai/feed.json',
      contentHash: hashOf(sealed({ specVersion: '1.1.1-draft', items: [item] })),
      publishedAt: '2026-11-01T00:00:00Z',
    };
    s.routes.set(
      '/.well-known/archive',
      json(
        sealed(
          broken
            ? { specVersion: '1.1.1-draft', standard: 'ai-archive', organization: { domain: '127.0.0.1' }, records: [rec] }
            : { specVersion: '1.1.1-draft', standard: 'ai-archive', organization: { name: 'Fixture Co' }, archive: [rec] },
        ),
      ),
    );
    s.routes.set(
      '/ai/pages.json',
      json(
        sealed({
          specVersion: '1.1.1-draft',
          standard: 'ai-page-manifest',
          pages: [{ path: '/', title: 'Home', assertionType: 'marketing', contentHash: 'sha256:00', format: 'text/html' }],
        }),
      ),
    );
    return discover(s.url, { ...opts, checkPages: false });
  }

  it('reports a publisher that speaks the types as conforming, and reads its archive member', async () => {
    const r = await publisher(false);
    expect(r.conformance).toEqual({ valid: true, issues: [] });
    expect(r.archive!.map((a) => a.versionId)).toEqual(['f1']);
    expect(r.files.find((f) => f.role === 'feed')!.inArchive).toBe(true);
    expect(r.files.map((f) => f.role)).toEqual(['feed', 'archive', 'pages']);
  });

  it('does not report a publisher that breaks them as conforming, naming each field', async () => {
    const r = await publisher(true);
    expect(r.conformance!.valid).toBe(false);
    const issues = r.conformance!.issues.join('\n');
    expect(issues).toMatch(/^manifest: pages: .*expected array/m);
    expect(issues).toMatch(/^manifest: humanReadable: .*expected string/m);
    expect(issues).toMatch(/^feed: items\.0\.category: /m);
    expect(issues).toMatch(/^feed: items\.0\.tags: .*expected array/m);
    expect(issues).toMatch(/^archive: organization\.name: /m);
    expect(issues).toMatch(/^archive: archive: .*expected array/m);
    // Still read leniently: the legacy member gives the records, with a warning.
    expect(r.archive!.map((a) => a.versionId)).toEqual(['f1']);
    expect(r.warnings).toContain('archive records are under "records", spec 002 puts them under "archive"');
  });
});

describe('reverify: bookmarks', () => {
  async function pinnedSite() {
    const s = await site();
    s.routes.set('/.well-known/ai', json(sealed(manifestFor(s.url))));
    s.routes.set('/ai/knowledge.json', json(knowledgeV(1)));
    const v1 = hashOf(knowledgeV(1));
    const archive = (records: unknown[]) => json(sealed({ standard: 'ai-archive', generated: '2026-11-05T00:00:00Z', archive: records }));
    s.routes.set(
      '/.well-known/archive',
      archive([{ versionId: 'k1', resource: '/ai/knowledge.json', contentHash: v1, publishedAt: '2026-11-01T00:00:00Z' }]),
    );
    const bookmark = createBookmark(await discover(s.url, opts));
    return { s, bookmark, v1, archive };
  }

  it('pins the manifest and every verified file', async () => {
    const { s, bookmark, v1 } = await pinnedSite();
    expect(bookmark.subject).toBe(`${s.url}/.well-known/ai`);
    expect(bookmark.pinnedResources.find((p) => p.resource === `${s.url}/ai/knowledge.json`)).toMatchObject({
      contentHash: v1,
      assertionTypesUsed: ['official-policy'],
      signedBy: null,
      observedAt: '2026-11-22T00:00:00.000Z',
    });
  });

  it('says same when nothing changed', async () => {
    const { bookmark } = await pinnedSite();
    const r = await reverify(bookmark, opts);
    expect(r.verdict).toBe('same');
    expect(r.resources.every((x) => x.verdict === 'same')).toBe(true);
  });

  it('says clean-supersession over a two-step archive chain', async () => {
    const { s, bookmark, v1, archive } = await pinnedSite();
    s.routes.set('/ai/knowledge.json', json(knowledgeV(3)));
    s.routes.set(
      '/.well-known/archive',
      archive([
        { versionId: 'k1', resource: '/ai/knowledge.json', contentHash: v1, publishedAt: '2026-11-01T00:00:00Z' },
        {
          versionId: 'k2',
          resource: '/ai/knowledge.json',
          contentHash: hashOf(knowledgeV(2)),
          publishedAt: '2026-11-02T00:00:00Z',
          supersedes: 'k1',
        },
        {
          versionId: 'k3',
          resource: `${s.url}/ai/knowledge.json`,
          contentHash: hashOf(knowledgeV(3)),
          publishedAt: '2026-11-03T00:00:00Z',
          supersedes: 'k2',
        },
      ]),
    );
    const r = await reverify(bookmark, opts);
    const k = r.resources.find((x) => x.resource.endsWith('/ai/knowledge.json'))!;
    expect(k.verdict).toBe('clean-supersession');
    expect(k.chain).toEqual(['k3', 'k2', 'k1']);
    expect(r.verdict).toBe('clean-supersession');
    expect(r.resources.map((x) => x.resource)).not.toContain(`${s.url}/.well-known/archive`);
    expect(r.bookmark.pinnedResources.find((p) => p.resource.endsWith('/ai/knowledge.json'))!.contentHash).toBe(hashOf(knowledgeV(3)));
  });

  it('says integrity-issue for a broken lineage (missing link), a cycle, or no archive', async () => {
    const { s, bookmark, v1, archive } = await pinnedSite();
    const only = (b: typeof bookmark) => ({
      ...b,
      pinnedResources: b.pinnedResources.filter((p) => p.resource.endsWith('/ai/knowledge.json')),
    });
    s.routes.set('/ai/knowledge.json', json(knowledgeV(3)));
    s.routes.set(
      '/.well-known/archive',
      archive([
        { versionId: 'k1', resource: '/ai/knowledge.json', contentHash: v1, publishedAt: '2026-11-01T00:00:00Z' },
        {
          versionId: 'k3',
          resource: '/ai/knowledge.json',
          contentHash: hashOf(knowledgeV(3)),
          publishedAt: '2026-11-03T00:00:00Z',
          supersedes: 'k2',
        },
      ]),
    );
    let r = await reverify(only(bookmark), opts);
    expect(r.verdict).toBe('integrity-issue');
    expect(r.resources[0].reason).toMatch(/unknown version k2/);

    s.routes.set(
      '/.well-known/archive',
      archive([
        { versionId: 'k1', resource: '/ai/knowledge.json', contentHash: v1, publishedAt: '2026-11-01T00:00:00Z' },
        {
          versionId: 'k2',
          resource: '/ai/knowledge.json',
          contentHash: hashOf(knowledgeV(2)),
          publishedAt: '2026-11-02T00:00:00Z',
          supersedes: 'k3',
        },
        {
          versionId: 'k3',
          resource: '/ai/knowledge.json',
          contentHash: hashOf(knowledgeV(3)),
          publishedAt: '2026-11-03T00:00:00Z',
          supersedes: 'k2',
        },
      ]),
    );
    r = await reverify(only(bookmark), opts);
    expect(r.verdict).toBe('integrity-issue');
    expect(r.resources[0].reason).toMatch(/cycle/);

    s.routes.delete('/.well-known/archive');
    r = await reverify(only(bookmark), opts);
    expect(r.verdict).toBe('integrity-issue');
    expect(r.resources[0].reason).toMatch(/no archive/);
  });

  it('says integrity-issue when the changed document does not match its own contentHash', async () => {
    const { s, bookmark, v1, archive } = await pinnedSite();
    const tampered = knowledgeV(2);
    (tampered.summary as { text: string }).text = 'edited';
    s.routes.set('/ai/knowledge.json', json(tampered));
    s.routes.set(
      '/.well-known/archive',
      archive([
        { versionId: 'k1', resource: '/ai/knowledge.json', contentHash: v1, publishedAt: '2026-11-01T00:00:00Z' },
        {
          versionId: 'k2',
          resource: '/ai/knowledge.json',
          contentHash: hashOf(tampered),
          publishedAt: '2026-11-02T00:00:00Z',
          supersedes: 'k1',
        },
      ]),
    );
    const r = await reverify(
      { ...bookmark, pinnedResources: bookmark.pinnedResources.filter((p) => p.resource.endsWith('/ai/knowledge.json')) },
      opts,
    );
    expect(r.verdict).toBe('integrity-issue');
    expect(r.resources[0].reason).toMatch(/own published contentHash/);
  });
});

describe('discover: limits and target guard', () => {
  it('refuses loopback targets unless allowPrivate is set', async () => {
    const s = await site({ '/.well-known/ai': json(sealed(manifestFor('http://127.0.0.1'))) });
    await expect(discover(s.url, { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'blocked-target' });
    await expect(discover('http://localhost:9/', {})).rejects.toMatchObject({ code: 'blocked-target' });
    await expect(discover('http://[::ffff:127.0.0.1]:9/', {})).rejects.toMatchObject({ code: 'blocked-target' });
    await expect(discover('http://10.1.2.3/', {})).rejects.toMatchObject({ code: 'blocked-target' });
  });

  it('refuses a link from a public site that points into a private network', async () => {
    const s = await site();
    s.routes.set('/.well-known/ai', {
      status: 404,
      headers: { link: '<http://169.254.169.254/latest/meta-data>; rel="ai-discovery"' },
      body: '',
    });
    // A public IP literal (no DNS involved) routed to the fixture by the transport: the guard stays on (allowPrivate off).
    const PUBLIC = 'http://93.184.215.14';
    const fetch = (u: string | URL | Request, init?: RequestInit) => globalThis.fetch(String(u).replace(PUBLIC, s.url), init);
    const r = await discover(PUBLIC, { fetch, timeoutMs: 2000 });
    expect(r.found).toBe(false);
    expect(r.attempts.find((a) => a.step === 'link-header')).toMatchObject({
      url: 'http://169.254.169.254/latest/meta-data',
      outcome: 'error',
      reason: expect.stringMatching(/^blocked-target/),
    });
    expect(s.requests).toEqual(['/.well-known/ai', '/']);
  });

  it('stops at the redirect, size and time limits', async () => {
    const s = await site();
    s.routes.set('/.well-known/ai', { status: 302, headers: { location: '/loop' } });
    s.routes.set('/loop', { status: 302, headers: { location: '/.well-known/ai' } });
    const r = await discover(s.url, { ...opts, maxRedirects: 2 });
    expect(r.attempts[0]).toMatchObject({ outcome: 'error', reason: expect.stringMatching(/^too-many-redirects/) });

    s.routes.set('/.well-known/ai', json({ ...manifestFor(s.url), padding: 'x'.repeat(5000) }));
    const big = await discover(s.url, { ...opts, maxBytes: 1000 });
    expect(big.attempts[0]).toMatchObject({ outcome: 'error', reason: expect.stringMatching(/^too-large/) });

    s.routes.set('/.well-known/ai', { hang: true });
    s.routes.set('/', { hang: true });
    const slow = await discover(s.url, { ...opts, timeoutMs: 150 });
    expect(slow.found).toBe(false);
    expect(slow.attempts[0]).toMatchObject({ outcome: 'error', reason: expect.stringMatching(/^timeout/) });

    // A body trickled one byte at a time never trips the socket idle timeout; the overall limit still stops it.
    s.routes.set('/.well-known/ai', { trickleMs: 20 });
    const trickled = await discover(s.url, { ...opts, timeoutMs: 300 });
    expect(trickled.attempts[0]).toMatchObject({ outcome: 'error', reason: expect.stringMatching(/^timeout: no complete answer/) });
  });
});
