/**
 * The discovery algorithm, in the order the standard gives:
 *
 * 1. `GET /.well-known/ai`: accepted only with status 200, a JSON body and the
 *    manifest shape (look-alikes such as the IETF draft document are refused);
 * 2. else `<link rel="ai-discovery">` in the head of the target page, then
 *    of the homepage (relative or absolute href);
 * 3. else a `Link` header with that relation on any response seen so far
 *    (404s included), parsed per RFC 8288;
 * 4. else "no manifest" (a result, not an error).
 *
 * Candidates whose declared type is not JSON, or whose body is not a manifest
 * (robots.md, ai.txt), are skipped with a reason. Once found, the manifest's
 * files (knowledge, feed, archive, query contract, page manifest) are fetched
 * and verified, and every page listed in the page manifest is hashed as served.
 */
import { sha256Hex } from '../hash.ts';
import { readArchive, resourceKey, type ArchiveRecord } from './archive.ts';
import { bodyJson, bodyText, DiscoveryFetchError, fetchGuarded, type FetchedResource, type FetchLimits } from './fetch.ts';
import { findLinkHeaders, findLinkTags, isJsonType, type LinkCandidate } from './link.ts';
import { checkManifestShape, normalizeManifest, type NormalizedManifest } from './manifest.ts';
import { checkFileConformance, checkManifestConformance } from './manifest.schema.ts';
import { verifyDocument, type DocumentVerdict, type VerifyOptions } from './verify.ts';

export type DiscoveryStep = 'well-known' | 'link-tag' | 'link-header';

export interface DiscoveryAttempt {
  step: DiscoveryStep;
  url: string;
  outcome: 'found' | 'rejected' | 'error';
  reason: string | null;
}

export interface FileReport {
  role: 'knowledge' | 'feed' | 'archive' | 'query' | 'pages';
  url: string;
  httpStatus: number | null;
  contentType: string | null;
  /** Present when the file was a JSON object. */
  verdict: DocumentVerdict | null;
  /** Whether the archive lists the file's current hash for this resource (null: no archive). */
  inArchive: boolean | null;
  /** Strict conformance of the file to spec 002 (null when it was not a JSON object). */
  conformance: { valid: boolean; issues: string[] } | null;
  error: string | null;
}

export interface PageCheck {
  path: string;
  url: string;
  published: string | null;
  served: string | null;
  status: 'match' | 'mismatch' | 'error';
  error: string | null;
}

export interface DiscoveryReport {
  target: string;
  observedAt: string;
  found: boolean;
  foundBy: DiscoveryStep | null;
  manifestUrl: string | null;
  attempts: DiscoveryAttempt[];
  manifest:
    | (DocumentVerdict & {
        normalized: NormalizedManifest;
        conformance: { valid: boolean; issues: string[] };
        httpHeaders: { contentType: string | null; cacheControl: string | null; etag: string | null; cors: string | null };
      })
    | null;
  files: FileReport[];
  pages: PageCheck[];
  archive: ArchiveRecord[] | null;
  /**
   * The agent's conformance verdict over everything it read: the manifest and each companion file, issues prefixed
   * with the file's role. A publisher whose files break a spec 002 type is not conforming.
   */
  conformance: { valid: boolean; issues: string[] } | null;
  warnings: string[];
}

export interface DiscoverOptions extends FetchLimits {
  /** Clock for observedAt (tests pin it). */
  now?: () => Date;
  /** Fetch and verify the files the manifest points to (default true). */
  followFiles?: boolean;
  /** Hash the pages listed in the page manifest (default true, at most `maxPages`). */
  checkPages?: boolean;
  maxPages?: number;
  isRevoked?: VerifyOptions['isRevoked'];
}

async function tryFetch(url: string, opts: DiscoverOptions, accept?: string): Promise<FetchedResource | DiscoveryFetchError> {
  try {
    return await fetchGuarded(url, opts, accept);
  } catch (e) {
    if (e instanceof DiscoveryFetchError) return e;
    throw e;
  }
}

/** Why a fetched candidate is not a manifest, or null when it is one. */
function rejectReason(r: FetchedResource): string | null {
  if (r.status !== 200) return `HTTP ${r.status}`;
  const doc = bodyJson(r);
  if (doc === undefined) return `body is not JSON (${r.headers.get('content-type') ?? 'no content-type'})`;
  const shape = checkManifestShape(doc);
  return shape.ok ? null : shape.reason;
}

function conformanceOf(issues: string[]): { valid: boolean; issues: string[] } {
  return { valid: issues.length === 0, issues };
}

/** Runs the discovery algorithm against `target` (a site origin or page URL) and verifies what it finds. */
export async function discover(target: string, opts: DiscoverOptions = {}): Promise<DiscoveryReport> {
  const observedAt = (opts.now ?? (() => new Date()))().toISOString();
  const report: DiscoveryReport = {
    target,
    observedAt,
    found: false,
    foundBy: null,
    manifestUrl: null,
    attempts: [],
    manifest: null,
    files: [],
    pages: [],
    archive: null,
    conformance: null,
    warnings: [],
  };
  let targetUrl: URL;
  try {
    targetUrl = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(target) ? target : `https://${target}`);
  } catch {
    throw new DiscoveryFetchError('bad-url', `not a URL or host name: ${target}`, target);
  }
  const seenHeaders: { headers: Headers; base: string }[] = [];
  let found: { res: FetchedResource; step: DiscoveryStep } | null = null;

  // Step 1: the well-known path. The target's own URL errors (bad URL, refused target) are the caller's error.
  const wkUrl = new URL('/.well-known/ai', targetUrl).href;
  const wk = await tryFetch(wkUrl, opts, 'application/json');
  if (wk instanceof DiscoveryFetchError) {
    if (wk.code === 'bad-url' || wk.code === 'blocked-target') throw wk;
    report.attempts.push({ step: 'well-known', url: wkUrl, outcome: 'error', reason: `${wk.code}: ${wk.message}` });
  } else {
    seenHeaders.push({ headers: wk.headers, base: wk.url });
    const reason = rejectReason(wk);
    report.attempts.push({ step: 'well-known', url: wkUrl, outcome: reason ? 'rejected' : 'found', reason });
    if (!reason) found = { res: wk, step: 'well-known' };
  }

  const tryCandidates = async (cands: LinkCandidate[], step: DiscoveryStep): Promise<void> => {
    for (const c of cands) {
      if (found) return;
      if (!isJsonType(c.type)) {
        report.attempts.push({ step, url: c.href, outcome: 'rejected', reason: `declared type ${c.type} is not JSON` });
        continue;
      }
      const r = await tryFetch(c.href, opts, 'application/json');
      if (r instanceof DiscoveryFetchError) {
        report.attempts.push({ step, url: c.href, outcome: 'error', reason: `${r.code}: ${r.message}` });
        continue;
      }
      const reason = rejectReason(r);
      report.attempts.push({ step, url: c.href, outcome: reason ? 'rejected' : 'found', reason });
      if (!reason) found = { res: r, step };
    }
  };

  // Step 2: <link rel="ai-discovery"> in the head of the target page, then of the homepage when the target is another page.
  const pages = [...new Set([targetUrl.href, new URL('/', targetUrl).href])];
  for (const pageUrl of pages) {
    if (found) break;
    const page = await tryFetch(pageUrl, opts, 'text/html, application/xhtml+xml;q=0.9, */*;q=0.5');
    if (page instanceof DiscoveryFetchError) {
      report.attempts.push({ step: 'link-tag', url: pageUrl, outcome: 'error', reason: `${page.code}: ${page.message}` });
      continue;
    }
    seenHeaders.push({ headers: page.headers, base: page.url });
    const ct = page.headers.get('content-type') ?? '';
    const tags = page.status === 200 && /html/i.test(ct) ? findLinkTags(bodyText(page), page.url) : [];
    if (!tags.length)
      report.attempts.push({
        step: 'link-tag',
        url: page.url,
        outcome: 'rejected',
        reason:
          page.status !== 200
            ? `HTTP ${page.status}`
            : /html/i.test(ct)
              ? 'no <link rel="ai-discovery"> in head'
              : `not HTML (${ct || 'no content-type'})`,
      });
    await tryCandidates(tags, 'link-tag');
  }

  // Step 3: Link headers of every response seen (RFC 8288).
  if (!found) {
    const cands = seenHeaders
      .flatMap((h) => findLinkHeaders(h.headers, h.base))
      .filter((c, i, all) => all.findIndex((x) => x.href === c.href) === i);
    if (!cands.length)
      report.attempts.push({
        step: 'link-header',
        url: targetUrl.href,
        outcome: 'rejected',
        reason: 'no Link header with rel="ai-discovery"',
      });
    await tryCandidates(cands, 'link-header');
  }

  if (!found) return report;
  const f = found as { res: FetchedResource; step: DiscoveryStep };
  report.found = true;
  report.foundBy = f.step;
  report.manifestUrl = f.res.url;
  if (f.res.redirects.length)
    report.warnings.push(`manifest was reached through ${f.res.redirects.length} redirect(s); the spec says serve it directly`);
  const doc = bodyJson(f.res) as Record<string, unknown>;
  const shape = checkManifestShape(doc);
  const verdict = verifyDocument(doc, f.res.url, { observedAt, isRevoked: opts.isRevoked });
  if (shape.ok) verdict.warnings.unshift(...shape.warnings);
  const normalized = normalizeManifest(doc, f.res.url, verdict.warnings);
  const ct = f.res.headers.get('content-type');
  if (!ct || !/json/i.test(ct)) verdict.warnings.push(`manifest served as ${ct ?? 'no content-type'}, not application/json`);
  if (f.res.headers.get('access-control-allow-origin') !== '*') verdict.warnings.push('manifest lacks Access-Control-Allow-Origin: *');
  const issues = checkManifestConformance(doc);
  report.manifest = {
    ...verdict,
    normalized,
    conformance: { valid: issues.length === 0, issues },
    httpHeaders: {
      contentType: ct,
      cacheControl: f.res.headers.get('cache-control'),
      etag: f.res.headers.get('etag'),
      cors: f.res.headers.get('access-control-allow-origin'),
    },
  };
  report.conformance = conformanceOf(issues.map((i) => `manifest: ${i}`));
  if (opts.followFiles === false) return report;

  // Files the manifest points to.
  const targets: { role: FileReport['role']; url: string }[] = [];
  for (const role of ['knowledge', 'feed', 'archive', 'query'] as const) {
    const cap = normalized.capabilities[role];
    if (cap?.available && cap.url) targets.push({ role, url: cap.url });
    else if (cap?.available) report.warnings.push(`capability ${role} is available but has no url`);
  }
  if (normalized.pagesUrl) targets.push({ role: 'pages', url: normalized.pagesUrl });
  const docs = new Map<string, unknown>();
  for (const t of targets) {
    const r = await tryFetch(t.url, opts, 'application/json');
    if (r instanceof DiscoveryFetchError) {
      report.files.push({
        role: t.role,
        url: t.url,
        httpStatus: null,
        contentType: null,
        verdict: null,
        inArchive: null,
        conformance: null,
        error: `${r.code}: ${r.message}`,
      });
      continue;
    }
    const json = r.status === 200 ? bodyJson(r) : undefined;
    const isDoc = typeof json === 'object' && json !== null && !Array.isArray(json);
    if (isDoc) docs.set(t.role, json);
    report.files.push({
      role: t.role,
      url: r.url,
      httpStatus: r.status,
      contentType: r.headers.get('content-type'),
      verdict: isDoc ? verifyDocument(json, r.url, { observedAt, isRevoked: opts.isRevoked }) : null,
      inArchive: null,
      conformance: isDoc ? conformanceOf(checkFileConformance(t.role, json)) : null,
      error: isDoc ? null : r.status !== 200 ? `HTTP ${r.status}` : 'not a JSON object',
    });
  }
  report.conformance = conformanceOf([
    ...issues.map((i) => `manifest: ${i}`),
    ...report.files.flatMap((f) => (f.conformance?.issues ?? []).map((i) => `${f.role}: ${i}`)),
  ]);

  const feedFile = report.files.find((x) => x.role === 'feed' && x.verdict);
  const feedDoc = docs.get('feed') as Record<string, unknown> | undefined;
  const feedItems =
    feedDoc && Array.isArray(feedDoc.items) ? feedDoc.items : feedDoc && Array.isArray(feedDoc.entries) ? feedDoc.entries : null;
  if (feedFile && feedItems) {
    const missing = feedItems.filter(
      (i) => typeof i !== 'object' || i === null || typeof (i as { assertionType?: unknown }).assertionType !== 'string',
    ).length;
    if (missing)
      feedFile.verdict!.warnings.push(`${missing} of ${feedItems.length} feed items have no assertionType (weighted as unknown)`);
  }

  const archiveFile = report.files.find((x) => x.role === 'archive' && x.verdict);
  if (archiveFile) {
    report.archive = readArchive(docs.get('archive'), archiveFile.url, report.warnings);
    const listed = (url: string, hash: string) =>
      report.archive!.some((a) => a.resource === resourceKey(url, url) && a.contentHash === hash);
    for (const x of report.files) if (x.verdict && x.role !== 'archive') x.inArchive = listed(x.url, x.verdict.hash.computed);
  }

  if (opts.checkPages !== false) {
    const pagesDoc = docs.get('pages') as Record<string, unknown> | undefined;
    const pagesFile = report.files.find((x) => x.role === 'pages');
    const list = pagesDoc && Array.isArray(pagesDoc.pages) ? pagesDoc.pages : [];
    const max = opts.maxPages ?? 50;
    if (list.length > max) report.warnings.push(`page manifest lists ${list.length} pages; only the first ${max} were checked`);
    for (const p of list.slice(0, max)) {
      if (typeof p !== 'object' || p === null || typeof (p as { path?: unknown }).path !== 'string') continue;
      const path = (p as { path: string }).path;
      const published =
        typeof (p as { contentHash?: unknown }).contentHash === 'string'
          ? ((p as { contentHash: string }).contentHash as string).toLowerCase()
          : null;
      const url = new URL(path, pagesFile!.url).href;
      const r = await tryFetch(url, opts, '*/*');
      if (r instanceof DiscoveryFetchError || r.status !== 200) {
        report.pages.push({
          path,
          url,
          published,
          served: null,
          status: 'error',
          error: r instanceof DiscoveryFetchError ? `${r.code}: ${r.message}` : `HTTP ${r.status}`,
        });
        continue;
      }
      const served = `sha256:${sha256Hex(r.body)}`;
      report.pages.push({ path, url, published, served, status: served === published ? 'match' : 'mismatch', error: null });
    }
  }
  return report;
}
