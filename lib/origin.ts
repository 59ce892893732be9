/**
 * Origin leaves: the provenance record carried by every data-bearing row and
 * response. A leaf is a flat JSON object with a fixed key set (absent values
 * are `null`, never omitted) so any language can recompute its hash:
 *
 *   leaf_hash = hex(SHA-256(UTF-8(RFC8785(leaf without "leaf_hash"))))
 *
 * Leaves form chains through `parent` (a parent's `leaf_hash`): a record leaf
 * points at the leaf of the source file it was read from, a daily quote leaf at
 * the previous trading day's leaf, an extraction leaf at the PDF leaf.
 */
import { hashCanonical, isSha256Hex, sha256Hex } from './hash.ts';

export const LEAF_ALG = 'sha256' as const;
export const LEAF_CANON = 'rfc8785' as const;

/** What a leaf attests. `source`: raw bytes as read; `record`: one row derived from a source; others are domain chains. */
export type LeafKind = 'source' | 'record' | 'fetch' | 'quote_day' | 'extraction' | 'snapshot' | (string & {});

export interface OriginLeaf {
  leaf_hash: string;
  alg: typeof LEAF_ALG;
  canon: typeof LEAF_CANON;
  kind: LeafKind;
  /** Dataset identifier, e.g. `sec-edgar/submissions`, `fmcsa/census`. */
  source: string;
  /** Where the bytes came from (an EDGAR URL, a file URL for local inputs). */
  source_url: string | null;
  /** When the bytes were fetched from `source_url` (ISO-8601 UTC), or null when they were supplied locally. */
  retrieved_at: string | null;
  /** SHA-256 (hex) of the source bytes this leaf rests on. */
  content_sha256: string | null;
  /** SHA-256 (hex) of the RFC 8785 JSON of the record, for record-level leaves. */
  record_sha256: string | null;
  /** `leaf_hash` of the parent leaf, or null for a root. */
  parent: string | null;
}

export type LeafBody = Omit<OriginLeaf, 'leaf_hash' | 'alg' | 'canon'>;

/** Where a set of rows was read from: one input file or HTTP response. */
export interface SourceRef {
  source: string;
  source_url: string | null;
  retrieved_at: string | null;
  content_sha256: string;
  byte_size: number;
}

/** Builds a leaf from its body and computes `leaf_hash`. Key order of the result is irrelevant to the hash. */
export function createLeaf(body: LeafBody): OriginLeaf {
  const unsigned = {
    alg: LEAF_ALG,
    canon: LEAF_CANON,
    kind: body.kind,
    source: body.source,
    source_url: body.source_url ?? null,
    retrieved_at: body.retrieved_at ?? null,
    content_sha256: body.content_sha256 ?? null,
    record_sha256: body.record_sha256 ?? null,
    parent: body.parent ?? null,
  };
  return { leaf_hash: unsignedLeafHash(unsigned), ...unsigned };
}

/** A member value the leaf template writes as is: a string of printable ASCII other than `"` and `\\` (JSON needs no escape), or null. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const plainText = (v: unknown): string | undefined => (v === null ? 'null' : typeof v === 'string' && PLAIN.test(v) ? `"${v}"` : undefined);

/**
 * `hashCanonical` of an unsigned leaf (the nine members but `leaf_hash`): when `alg` and `canon` are the constants and
 * every other member is null or a plain string, its RFC 8785 text is written from a template in sorted key order
 * (alg, canon, content_sha256, kind, parent, record_sha256, retrieved_at, source, source_url) instead of through the
 * generic canonicalizer (a Set, key sort and array joins per leaf: a sixth of a `/api/verify` request's CPU, issue 22);
 * any other value goes through hashCanonical. The same text, so the same hash (test/lib/hash.test.ts compares both).
 */
export function unsignedLeafHash(u: Record<string, unknown>): string {
  if (u.alg === LEAF_ALG && u.canon === LEAF_CANON) {
    const content = plainText(u.content_sha256);
    const kind = plainText(u.kind);
    const parent = plainText(u.parent);
    const record = plainText(u.record_sha256);
    const retrieved = plainText(u.retrieved_at);
    const source = plainText(u.source);
    const url = plainText(u.source_url);
    if (
      content !== undefined &&
      kind !== undefined &&
      parent !== undefined &&
      record !== undefined &&
      retrieved !== undefined &&
      source !== undefined &&
      url !== undefined
    )
      return sha256Hex(
        `{"alg":"${LEAF_ALG}","canon":"${LEAF_CANON}","content_sha256":${content},"kind":${kind},"parent":${parent},"record_sha256":${record},"retrieved_at":${retrieved},"source":${source},"source_url":${url}}`,
      );
  }
  return hashCanonical(u);
}

const sourceLeafCache = new WeakMap<SourceRef, OriginLeaf>();

/** The root leaf of one source file or response. */
export function createSourceLeaf(src: SourceRef, parent: string | null = null): OriginLeaf {
  if (parent === null) {
    const hit = sourceLeafCache.get(src);
    if (hit && hit.content_sha256 === src.content_sha256 && hit.source_url === src.source_url) return hit;
  }
  const leaf = createLeaf({
    kind: 'source',
    source: src.source,
    source_url: src.source_url,
    retrieved_at: src.retrieved_at,
    content_sha256: src.content_sha256,
    record_sha256: null,
    parent,
  });
  if (parent === null) sourceLeafCache.set(src, leaf);
  return leaf;
}

/**
 * The leaf of one record read from `src`. `parent` defaults to the source leaf,
 * so the record chains to the exact bytes it came from.
 */
export function createRecordLeaf(record: unknown, src: SourceRef, opts: { kind?: LeafKind; parent?: string | null } = {}): OriginLeaf {
  return createLeaf({
    kind: opts.kind ?? 'record',
    source: src.source,
    source_url: src.source_url,
    retrieved_at: src.retrieved_at,
    content_sha256: src.content_sha256,
    record_sha256: hashCanonical(record),
    parent: opts.parent === undefined ? createSourceLeaf(src).leaf_hash : opts.parent,
  });
}

/** Recomputes `leaf_hash` from the other fields; true when it matches and the shape is a valid leaf. */
export function verifyLeaf(leaf: unknown): leaf is OriginLeaf {
  if (!leaf || typeof leaf !== 'object') return false;
  const l = leaf as Record<string, unknown>;
  if (!isSha256Hex(l.leaf_hash) || l.alg !== LEAF_ALG || l.canon !== LEAF_CANON) return false;
  if (typeof l.kind !== 'string' || typeof l.source !== 'string') return false;
  const { leaf_hash, ...rest } = l;
  const keys = Object.keys(rest).sort().join(',');
  if (keys !== 'alg,canon,content_sha256,kind,parent,record_sha256,retrieved_at,source,source_url') return false;
  return unsignedLeafHash(rest) === leaf_hash;
}

/**
 * Verifies a chain walked from `head` through `parent` links using `lookup`.
 * Returns the leaves in walk order and the first problem found, if any.
 */
export async function verifyChain(
  head: string,
  lookup: (hash: string) => Promise<OriginLeaf | undefined> | OriginLeaf | undefined,
  maxDepth = 100_000,
): Promise<{ valid: boolean; leaves: OriginLeaf[]; problem: string | null }> {
  const leaves: OriginLeaf[] = [];
  const seen = new Set<string>();
  let cur: string | null = head;
  while (cur) {
    if (seen.has(cur)) return { valid: false, leaves, problem: `cycle at ${cur}` };
    if (leaves.length >= maxDepth) return { valid: false, leaves, problem: `chain longer than ${maxDepth}` };
    seen.add(cur);
    const leaf = await lookup(cur);
    if (!leaf) return { valid: false, leaves, problem: `missing leaf ${cur}` };
    if (!verifyLeaf(leaf) || leaf.leaf_hash !== cur) return { valid: false, leaves, problem: `leaf ${cur} does not hash to its leaf_hash` };
    leaves.push(leaf);
    cur = leaf.parent;
  }
  return { valid: true, leaves, problem: null };
}
