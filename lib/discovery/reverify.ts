/**
 * Bookmarks and re-verification (spec Appendix B). A bookmark pins
 * `(resource, contentHash)` pairs as observed; on a later visit each pinned
 * resource gets exactly one verdict:
 *
 * - `same`: the current RFC 8785 hash H′ equals the pinned hash;
 * - `clean-supersession`: H′ differs, the document matches its own published
 *   hash, and the site's archive has a record for the resource with hash H′
 *   whose `supersedes` chain (cycle-checked, bounded) reaches a record with
 *   the pinned hash;
 * - `integrity-issue`: anything else (no archive, missing link, cycle, the
 *   resource gone, a document that does not match its own contentHash).
 *
 * The bookmark's verdict is the worst of its resources.
 */
import { resourceKey, walkChain, type ArchiveRecord } from './archive.ts';
import { discover, type DiscoverOptions, type DiscoveryReport } from './discover.ts';
import { bodyJson, DiscoveryFetchError, fetchGuarded } from './fetch.ts';
import { verifyDocument, type DocumentVerdict, type HashStatus } from './verify.ts';

export type ReverifyVerdict = 'same' | 'clean-supersession' | 'integrity-issue';

export interface PinnedResource {
  resource: string;
  assertionTypesUsed: string[];
  contentHash: string;
  signedBy: string | null;
  observedAt: string;
}

export interface Bookmark {
  subject: string;
  pinnedResources: PinnedResource[];
  trustNotes: string[];
  lastVerifiedAt: string;
}

export interface ResourceJudgement {
  resource: string;
  verdict: ReverifyVerdict;
  pinnedHash: string;
  currentHash: string | null;
  reason: string;
  /** versionIds walked from the current record back to the pinned one. */
  chain: string[];
}

export interface ReverifyResult {
  subject: string;
  verdict: ReverifyVerdict;
  resources: ResourceJudgement[];
  observedAt: string;
  bookmark: Bookmark;
}

/**
 * Builds a bookmark from a discovery report: the manifest and every verified
 * file, pinned by their computed hash. The archive is not pinned: it is the
 * append-only lineage that explains changes, and changes with every one.
 */
export function createBookmark(report: DiscoveryReport): Bookmark {
  const verdicts: DocumentVerdict[] = [
    ...(report.manifest ? [report.manifest] : []),
    ...report.files.flatMap((f) => (f.verdict && f.role !== 'archive' ? [f.verdict] : [])),
  ];
  const trustNotes: string[] = [];
  const pinnedResources = verdicts.map((v) => {
    if (v.hash.status !== 'match') trustNotes.push(`${v.url}: published contentHash ${v.hash.status}; pinned our own RFC 8785 hash`);
    if (v.origin === 'claimed') trustNotes.push(`${v.url}: signer ${v.signature.claimed} is claimed, not verified`);
    return {
      resource: resourceKey(v.url, v.url),
      assertionTypesUsed: [...new Set(v.assertions.map((a) => a.declared))].sort(),
      contentHash: v.hash.computed,
      signedBy: v.originVerified ? v.signature.recovered : null,
      observedAt: v.timestamps.observedAt,
    };
  });
  return { subject: report.manifestUrl ?? report.target, pinnedResources, trustNotes, lastVerifiedAt: report.observedAt };
}

/** The verdict for one pinned resource, given what is served now and the site's archive records (null: no archive). */
export function judgeResource(
  pinned: PinnedResource,
  current: { computed: string; status: HashStatus } | null,
  archive: ArchiveRecord[] | null,
): ResourceJudgement {
  const base = { resource: pinned.resource, pinnedHash: pinned.contentHash, currentHash: current?.computed ?? null, chain: [] as string[] };
  if (!current) return { ...base, verdict: 'integrity-issue', reason: 'resource could not be fetched as a JSON document' };
  if (current.computed === pinned.contentHash) return { ...base, verdict: 'same', reason: 'hash unchanged' };
  if (current.status === 'mismatch')
    return { ...base, verdict: 'integrity-issue', reason: 'changed, and the document does not match its own published contentHash' };
  if (!archive) return { ...base, verdict: 'integrity-issue', reason: 'changed, and the site publishes no archive to explain it' };
  const key = resourceKey(pinned.resource, pinned.resource);
  const heads = archive.filter((r) => r.resource === key && r.contentHash === current.computed);
  if (!heads.length) return { ...base, verdict: 'integrity-issue', reason: 'changed, and no archive record carries the new hash' };
  let last: ReturnType<typeof walkChain> = { outcome: 'end', path: [] };
  for (const head of heads) {
    last = walkChain(archive, head, (r) => r.resource === key && r.contentHash === pinned.contentHash);
    if (last.outcome === 'reached')
      return {
        ...base,
        verdict: 'clean-supersession',
        chain: last.path,
        reason: `archive chain ${last.path.join(' → ')} reaches the pinned hash`,
      };
  }
  const why = {
    cycle: 'the supersedes chain has a cycle',
    'missing-link': `the supersedes chain breaks at unknown version ${last.path.at(-1)}`,
    end: 'the supersedes chain ends without reaching the pinned hash',
    'too-long': 'the supersedes chain is too long',
    reached: '',
  }[last.outcome];
  return { ...base, verdict: 'integrity-issue', chain: last.path, reason: `changed: ${why}` };
}

const RANK: Record<ReverifyVerdict, number> = { same: 0, 'clean-supersession': 1, 'integrity-issue': 2 };

/** Re-visits a bookmark's subject and judges every pinned resource; returns the updated bookmark too. */
export async function reverify(bookmark: Bookmark, opts: DiscoverOptions = {}): Promise<ReverifyResult> {
  const report = await discover(bookmark.subject, { ...opts, checkPages: false });
  const observedAt = report.observedAt;
  const current = new Map<string, DocumentVerdict>();
  for (const v of [...(report.manifest ? [report.manifest] : []), ...report.files.flatMap((f) => (f.verdict ? [f.verdict] : []))])
    current.set(resourceKey(v.url, v.url), v);
  const resources: ResourceJudgement[] = [];
  for (const p of bookmark.pinnedResources) {
    let v = current.get(resourceKey(p.resource, p.resource)) ?? null;
    if (!v) {
      // No longer linked from the manifest: fetch it directly.
      try {
        const r = await fetchGuarded(p.resource, opts, 'application/json');
        const json = r.status === 200 ? bodyJson(r) : undefined;
        if (typeof json === 'object' && json !== null && !Array.isArray(json))
          v = verifyDocument(json, r.url, { observedAt, isRevoked: opts.isRevoked });
      } catch (e) {
        if (!(e instanceof DiscoveryFetchError)) throw e;
      }
    }
    resources.push(judgeResource(p, v ? { computed: v.hash.computed, status: v.hash.status } : null, report.archive));
  }
  const verdict = resources.reduce<ReverifyVerdict>((w, r) => (RANK[r.verdict] > RANK[w] ? r.verdict : w), 'same');
  const next: Bookmark = {
    ...bookmark,
    pinnedResources: bookmark.pinnedResources.map((p) => {
      const j = resources.find((r) => r.resource === p.resource);
      return j && j.verdict === 'clean-supersession' && j.currentHash ? { ...p, contentHash: j.currentHash, observedAt } : p;
    }),
    lastVerifiedAt: verdict === 'integrity-issue' ? bookmark.lastVerifiedAt : observedAt,
  };
  return { subject: bookmark.subject, verdict, resources, observedAt, bookmark: next };
}
