/**
 * Reading an `ai-archive` document: its version records, consistency checks
 * (required fields, unique versionIds, resolvable `supersedes`, no cycles)
 * and the bounded walk of a `supersedes` chain used by re-verification.
 */

export interface ArchiveRecord {
  versionId: string;
  /** Absolute URL of the resource (relative `resource` values resolved against the archive URL). */
  resource: string;
  contentHash: string;
  publishedAt: string | null;
  supersedes: string | null;
  assertionType: string | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

/** Longest `supersedes` chain followed before giving up. */
export const MAX_CHAIN = 256;

/** Canonical form of a resource reference for comparisons: absolute URL without fragment. */
export function resourceKey(ref: string, base: string): string {
  try {
    const u = new URL(ref, base);
    u.hash = '';
    return u.href;
  } catch {
    return ref;
  }
}

/**
 * Records of an archive document: spec 002 ("Archive file") puts them under `archive`; the non-standard
 * `records`, `versions` and `entries` members are still read, with a warning naming the drift.
 */
export function readArchive(doc: unknown, archiveUrl: string, warnings: string[]): ArchiveRecord[] {
  if (!isObj(doc)) {
    warnings.push('archive is not a JSON object');
    return [];
  }
  if (doc.standard !== 'ai-archive') warnings.push(`archive standard is ${JSON.stringify(doc.standard ?? null)}, expected "ai-archive"`);
  let raw: unknown[] | null = Array.isArray(doc.archive) ? doc.archive : null;
  if (!raw)
    for (const legacy of ['records', 'versions', 'entries'] as const)
      if (Array.isArray(doc[legacy])) {
        warnings.push(`archive records are under "${legacy}", spec 002 puts them under "archive"`);
        raw = doc[legacy] as unknown[];
        break;
      }
  if (!raw) {
    warnings.push('archive has no "archive" array of records');
    return [];
  }
  const out: ArchiveRecord[] = [];
  const ids = new Set<string>();
  for (const [i, r] of raw.entries()) {
    if (!isObj(r)) {
      warnings.push(`archive record ${i} is not an object`);
      continue;
    }
    const versionId = str(r.versionId);
    const resource = str(r.resource);
    const contentHash = str(r.contentHash);
    if (!versionId || !resource || !contentHash) {
      warnings.push(`archive record ${i} lacks versionId, resource or contentHash`);
      continue;
    }
    if (!/^sha256:[0-9a-f]{64}$/.test(contentHash)) warnings.push(`archive record ${versionId}: contentHash is not sha256:<64 hex>`);
    if (!str(r.publishedAt)) warnings.push(`archive record ${versionId} lacks publishedAt`);
    if (ids.has(versionId)) warnings.push(`archive versionId ${versionId} is not unique`);
    ids.add(versionId);
    out.push({
      versionId,
      resource: resourceKey(resource, archiveUrl),
      contentHash: contentHash.toLowerCase(),
      publishedAt: str(r.publishedAt),
      supersedes: str(r.supersedes),
      assertionType: str(r.assertionType),
    });
  }
  for (const r of out) {
    if (r.supersedes && !ids.has(r.supersedes)) warnings.push(`archive record ${r.versionId} supersedes unknown version ${r.supersedes}`);
    const walk = walkChain(out, r, () => false);
    if (walk.outcome === 'cycle') warnings.push(`archive supersedes chain from ${r.versionId} has a cycle`);
  }
  return out;
}

export type ChainOutcome = 'reached' | 'end' | 'cycle' | 'missing-link' | 'too-long';

/**
 * Follows `supersedes` links from `start` until `stop(record)` is true.
 * Returns the visited versionIds and why the walk ended: `reached`, `end`
 * (a record superseding nothing), `cycle`, `missing-link` (an unknown
 * versionId) or `too-long` (more than MAX_CHAIN steps).
 */
export function walkChain(
  records: ArchiveRecord[],
  start: ArchiveRecord,
  stop: (r: ArchiveRecord) => boolean,
): { outcome: ChainOutcome; path: string[] } {
  const byId = new Map<string, ArchiveRecord>();
  for (const r of records) if (!byId.has(r.versionId)) byId.set(r.versionId, r);
  const path: string[] = [];
  const seen = new Set<string>();
  let cur: ArchiveRecord | undefined = start;
  while (cur) {
    if (seen.has(cur.versionId)) return { outcome: 'cycle', path };
    seen.add(cur.versionId);
    path.push(cur.versionId);
    if (path.length > 1 && stop(cur)) return { outcome: 'reached', path };
    if (path.length > MAX_CHAIN) return { outcome: 'too-long', path };
    if (!cur.supersedes) return { outcome: 'end', path };
    const next = byId.get(cur.supersedes);
    if (!next) return { outcome: 'missing-link', path: [...path, cur.supersedes] };
    cur = next;
  }
  return { outcome: 'end', path };
}
