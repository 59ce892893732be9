/** Finding rel="ai-discovery" in HTML heads and Link headers, and adding it to our HTML. */
import { describe, expect, it } from 'vitest';
import { findLinkHeaders, findLinkTags, isJsonType } from '../../lib/discovery/index.ts';
import { H3 } from 'h3';
import {
  DISCOVERY_LINK_HEADER,
  DISCOVERY_LINK_TAG,
  registerDiscoveryLinkHeader,
  withDiscoveryLink,
} from '../../service/platform/discovery-html.ts';
import { jsonTextResponse, toFastResponse } from '../../service/platform/response-finish.ts';

describe('findLinkTags', () => {
  it('resolves relative and absolute hrefs, any attribute order and quoting, rel token lists', () => {
    const html = `<html><head>
      <LINK href=/a.json REL="ai-discovery">
      <link type='application/json' rel='stylesheet ai-discovery' href='https://cdn.example/b.json'/>
      <link rel="stylesheet" href="/style.css">
      <link rel="ai-discovery-ext" href="/not-this.json">
      <link rel="ai-discovery" href="c.json?x=1&amp;y=2">
    </head><body></body></html>`;
    expect(findLinkTags(html, 'https://site.example/dir/page.html')).toEqual([
      { href: 'https://site.example/a.json', type: null, source: 'link-tag' },
      { href: 'https://cdn.example/b.json', type: 'application/json', source: 'link-tag' },
      { href: 'https://site.example/dir/c.json?x=1&y=2', type: null, source: 'link-tag' },
    ]);
  });

  it('honours <base href> and ignores comments, scripts and the body', () => {
    const html = `<head><base href="https://base.example/x/"><!-- <link rel="ai-discovery" href="/c.json"> -->
      <script>document.write('<link rel="ai-discovery" href="/s.json">')</script>
      <link rel="ai-discovery" href="m.json"></head><body><link rel="ai-discovery" href="/b.json"></body>`;
    expect(findLinkTags(html, 'https://site.example/').map((l) => l.href)).toEqual(['https://base.example/x/m.json']);
  });
});

describe('findLinkHeaders', () => {
  it('parses several links with quoting, case-insensitive relation lists and relative targets', () => {
    const h = new Headers();
    h.append(
      'link',
      '<https://a.example/next>; rel="next"; title="a, b; c", </meta/ai.json>; rel="preload AI-Discovery"; type="application/json"',
    );
    h.append('link', '<other.json>; rel=ai-discovery');
    expect(findLinkHeaders(h, 'https://site.example/dir/')).toEqual([
      { href: 'https://site.example/meta/ai.json', type: 'application/json', source: 'link-header' },
      { href: 'https://site.example/dir/other.json', type: null, source: 'link-header' },
    ]);
  });

  it('yields nothing for absent or malformed headers', () => {
    expect(findLinkHeaders(new Headers(), 'https://x.example/')).toEqual([]);
    expect(findLinkHeaders(new Headers({ link: 'garbage without brackets' }), 'https://x.example/')).toEqual([]);
  });

  it('accepts JSON media types only', () => {
    expect(
      [null, 'application/json', 'application/json; charset=utf-8', 'application/ld+json', 'text/plain', 'text/markdown'].map(isJsonType),
    ).toEqual([true, true, true, true, false, false]);
  });
});

describe('withDiscoveryLink', () => {
  it('puts the link tag in the head once, whatever the page looks like', () => {
    expect(withDiscoveryLink('<html><head><title>t</title></head><body></body></html>')).toBe(
      `<html><head><title>t</title>${DISCOVERY_LINK_TAG}\n</head><body></body></html>`,
    );
    expect(withDiscoveryLink('<html><head lang="en"><body>x</body></html>')).toContain(`<head lang="en">\n${DISCOVERY_LINK_TAG}`);
    expect(withDiscoveryLink('<p>fragment</p>')).toBe(`<head>${DISCOVERY_LINK_TAG}</head>\n<p>fragment</p>`);
    const once = withDiscoveryLink('<head></head>');
    expect(withDiscoveryLink(once)).toBe(once);
    expect(findLinkTags(once, 'https://s.example/')).toEqual([
      { href: 'https://s.example/.well-known/ai', type: 'application/json', source: 'link-tag' },
    ]);
  });
});

describe('registerDiscoveryLinkHeader', () => {
  it('adds the Link header to HTML however the route answers (event headers, web Response, layer answer), to nothing else', async () => {
    const app = new H3();
    registerDiscoveryLinkHeader(app);
    const html = '<p>x</p>';
    app.get('/event-headers', (e) => {
      e.res.headers.set('content-type', 'text/html; charset=utf-8');
      return html;
    });
    app.get('/web', () => new Response(html, { headers: { 'content-type': 'text/html' } }));
    app.get('/layer', () => toFastResponse({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: html }));
    app.get('/json', () => ({ a: 1 }));
    app.get('/json-text', () => jsonTextResponse('{"a":1}', { status: 200, headers: { 'content-type': 'application/json' } }));
    app.get('/text', () => 'plain');
    const link = async (p: string) => (await app.fetch(new Request(`http://proofline.test${p}`))).headers.get('link');
    for (const p of ['/event-headers', '/web', '/layer']) expect(await link(p), p).toBe(DISCOVERY_LINK_HEADER);
    for (const p of ['/json', '/json-text', '/text']) expect(await link(p), p).toBeNull();
  });
});
