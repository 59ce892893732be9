/**
 * Verification of one discovery document, offline and deterministic given
 * `observedAt`:
 *
 * - content hash: "sha256:" + SHA-256 of the RFC 8785 canonical JSON of the
 *   document without its top-level `_signature` (lib/hash.ts) compared with
 *   `_signature.contentHash` → `match` | `mismatch` | `absent`. On a mismatch
 *   the legacy hashing bugs seen in the wild are diagnosed, never accepted.
 * - tier (claimed by the fields present): 1 unsigned, 2 contentHash,
 *   3 + digitalName/network/signedAt/method, 4 + anchoredAt/identityContract.
 * - signature: when `_signature.signature` is present, the signer is
 *   recovered (EIP-191 over the contentHash string, or the vendor v1.2
 *   raw-digest scheme) and compared with `digitalName` (or `signer`).
 *   `originVerified` is true only after a real recovery that matches the
 *   claimed name, over a hash that matches the content, by a key not revoked.
 * - assertion types found anywhere in the document, weighted.
 * - the four timestamps; `observedAt` is the agent's clock.
 */
import { canonicalJson, sha256Hex } from '../hash.ts';
import { EIP191_METHOD, isAddress, recoverPersonal, recoverRawDigest, type SignatureScheme } from './signature.ts';

export type HashStatus = 'match' | 'mismatch' | 'absent';
export type SignatureStatus = 'absent' | 'verified' | 'signer-mismatch' | 'invalid' | 'revoked';

/** Spec 1.1.1 assertion types, strongest first; `unknown` ranks below `community`. */
export const ASSERTION_WEIGHTS: Record<string, number> = {
  'official-policy': 1.0,
  legal: 1.0,
  'technical-documentation': 0.8,
  marketing: 0.5,
  editorial: 0.4,
  community: 0.2,
  unknown: 0.1,
};

export interface AssertionUse {
  /** JSON path of the object carrying `assertionType`. */
  path: string;
  declared: string;
  /** Declared type if known, else `unknown`. */
  type: string;
  weight: number;
}

export interface DocumentVerdict {
  url: string;
  hash: {
    status: HashStatus;
    published: string | null;
    /** Our RFC 8785 hash of the document as received. */
    computed: string;
    canonicalization: 'RFC8785';
    /** On a mismatch: which known legacy method the published hash matches, if any (diagnosis only, never a match). */
    legacyMethod: 'legacy-replacer-array' | 'insertion-order-compact' | null;
  };
  tier: 1 | 2 | 3 | 4;
  signature: {
    status: SignatureStatus;
    scheme: SignatureScheme | null;
    /** Address claimed in `digitalName` (or `signer`). */
    claimed: string | null;
    /** Address recovered from the signature bytes. */
    recovered: string | null;
    method: string | null;
    network: string | null;
    identityContract: string | null;
  };
  /** True only after a real signature recovery matching the claimed signer over matching content by an unrevoked key. */
  originVerified: boolean;
  /** `verified`, or `claimed` when a signer is named but not proven, or `none`. */
  origin: 'verified' | 'claimed' | 'none';
  assertions: AssertionUse[];
  /** Lowest weight among assertion uses (conservative), or null when none are declared. */
  assertionWeight: number | null;
  timestamps: { publishedAt: string | null; signedAt: string | null; anchoredAt: string | null; observedAt: string };
  warnings: string[];
}

export interface VerifyOptions {
  observedAt: string;
  /** Revocation check for tier-4 claims: true when `address` is revoked under `identityContract`. Offline there is none. */
  isRevoked?: (identityContract: string, address: string) => boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : null);

/** The document without its top-level `_signature`: what the content hash covers. */
export function stripSignature(doc: Record<string, unknown>): Record<string, unknown> {
  const { _signature: _ignored, ...rest } = doc;
  return rest;
}

/** The project's content hash: "sha256:" + hex SHA-256 of RFC 8785 canonical JSON of the document minus `_signature`. */
export function computeContentHash(doc: Record<string, unknown>): string {
  return `sha256:${sha256Hex(canonicalJson(stripSignature(doc)))}`;
}

function normalizeHash(h: string): string {
  const s = h.trim().toLowerCase();
  return s.startsWith('sha256:') ? s : /^[0-9a-f]{64}$/.test(s) ? `sha256:${s}` : s;
}

function diagnoseLegacy(body: Record<string, unknown>, published: string): DocumentVerdict['hash']['legacyMethod'] {
  // Known buggy signers (see ../shared/notes/discovery-mcp.md): diagnosed so the report can say why, never accepted.
  if (`sha256:${sha256Hex(JSON.stringify(body, Object.keys(body).sort()))}` === published) return 'legacy-replacer-array';
  if (`sha256:${sha256Hex(JSON.stringify(body))}` === published) return 'insertion-order-compact';
  return null;
}

function collectAssertions(doc: unknown, path: string, out: AssertionUse[], depth: number): void {
  if (depth > 8 || out.length > 500) return;
  if (Array.isArray(doc)) {
    for (const [i, v] of doc.entries()) collectAssertions(v, `${path}[${i}]`, out, depth + 1);
  } else if (isObj(doc)) {
    if (typeof doc.assertionType === 'string') {
      const declared = doc.assertionType;
      const type = declared in ASSERTION_WEIGHTS && declared !== 'unknown' ? declared : 'unknown';
      out.push({ path: path || '$', declared, type, weight: ASSERTION_WEIGHTS[type] });
    }
    for (const [k, v] of Object.entries(doc)) if (k !== '_signature') collectAssertions(v, `${path}.${k}`, out, depth + 1);
  }
}

/** Verifies one parsed document fetched from `url`. Never throws on odd input. */
export function verifyDocument(doc: unknown, url: string, opts: VerifyOptions): DocumentVerdict {
  const warnings: string[] = [];
  const d = isObj(doc) ? doc : {};
  if (!isObj(doc)) warnings.push('document is not a JSON object');
  const sig = isObj(d._signature) ? d._signature : null;
  if (d._signature !== undefined && !sig) warnings.push('_signature is not an object');
  const body = stripSignature(d);
  const computed = `sha256:${sha256Hex(canonicalJson(body))}`;
  const publishedRaw = str(sig?.contentHash);
  const published = publishedRaw ? normalizeHash(publishedRaw) : null;
  if (publishedRaw && published !== publishedRaw) warnings.push('contentHash is not in the form "sha256:<lower-case hex>"');
  const status: HashStatus = published === null ? 'absent' : published === computed ? 'match' : 'mismatch';
  const legacyMethod = status === 'mismatch' && published ? diagnoseLegacy(body, published) : null;
  if (legacyMethod)
    warnings.push(`published contentHash matches the ${legacyMethod} method, which does not protect the content as RFC 8785 does`);
  if (sig && str(sig.canonicalization) && sig.canonicalization !== 'RFC8785')
    warnings.push(`_signature.canonicalization is ${String(sig.canonicalization)}, verified as RFC8785 anyway`);

  const claimed = str(sig?.digitalName) ?? str(sig?.signer);
  const method = str(sig?.method);
  const network = str(sig?.network);
  const signedAt = str(sig?.signedAt);
  const anchoredAt = str(sig?.anchoredAt);
  const identityContract = str(sig?.identityContract);
  let tier: DocumentVerdict['tier'] = 1;
  if (published) {
    tier = 2;
    if (claimed && network && signedAt && method) {
      tier = 3;
      if (anchoredAt && identityContract) tier = 4;
    }
  }
  if (claimed && !isAddress(claimed)) warnings.push(`digitalName ${claimed} is not an EIP-55 address`);

  let sigStatus: SignatureStatus = 'absent';
  let scheme: SignatureScheme | null = null;
  let recovered: string | null = null;
  const sigBytes = str(sig?.signature);
  if (sigBytes && published) {
    // Try the scheme the method names first, then the other one; report the one that recovers the claimed signer.
    const order: SignatureScheme[] =
      method && /ecdsa-secp256k1$|raw/i.test(method) && !/eip191|personal/i.test(method)
        ? ['raw-digest', 'eip191-personal-sign']
        : ['eip191-personal-sign', 'raw-digest'];
    const attempts: { s: SignatureScheme; addr: string | null }[] = [];
    let hit: { s: SignatureScheme; addr: string | null } | undefined;
    for (const s of order) {
      const a = {
        s,
        addr: s === 'eip191-personal-sign' ? recoverPersonal(publishedRaw!, sigBytes) : recoverRawDigest(published, sigBytes),
      };
      attempts.push(a);
      if (a.addr && claimed && a.addr.toLowerCase() === claimed.toLowerCase()) {
        hit = a; // the second scheme is tried only when the first does not recover the claimed signer
        break;
      }
    }
    const first = attempts.find((a) => a.addr);
    if (hit) {
      scheme = hit.s;
      recovered = hit.addr;
      sigStatus = 'verified';
    } else if (first) {
      scheme = first.s;
      recovered = first.addr;
      sigStatus = 'signer-mismatch';
    } else sigStatus = 'invalid';
    if (sigStatus === 'verified' && identityContract && recovered && opts.isRevoked?.(identityContract, recovered)) sigStatus = 'revoked';
  } else if (sigBytes) {
    sigStatus = 'invalid';
    warnings.push('signature present without a contentHash to cover');
  } else if (claimed) warnings.push('digitalName is claimed but no signature bytes are published: origin is a claim only');
  if (method === EIP191_METHOD && scheme && scheme !== 'eip191-personal-sign')
    warnings.push(`method says ${EIP191_METHOD} but the signature recovers under ${scheme}`);

  const originVerified = sigStatus === 'verified' && status === 'match';
  const assertions: AssertionUse[] = [];
  collectAssertions(body, '$', assertions, 0);
  for (const a of assertions)
    if (a.type === 'unknown') warnings.push(`unknown assertionType "${a.declared}" at ${a.path} ranked below community`);
  const publishedAt = str(d.generated) ?? str(d.publishedAt) ?? str(d.lastUpdated) ?? str(d.updated);
  if (signedAt && publishedAt && Date.parse(signedAt) < Date.parse(publishedAt))
    warnings.push('signedAt is earlier than the publication time');
  return {
    url,
    hash: { status, published, computed, canonicalization: 'RFC8785', legacyMethod },
    tier,
    signature: { status: sigStatus, scheme, claimed, recovered, method, network, identityContract },
    originVerified,
    origin: originVerified ? 'verified' : claimed ? 'claimed' : 'none',
    assertions,
    assertionWeight: assertions.length ? Math.min(...assertions.map((a) => a.weight)) : null,
    timestamps: { publishedAt, signedAt, anchoredAt, observedAt: opts.observedAt },
    warnings,
  };
}
