/**
 * Verification receipts, transport-free and I/O-free: what is signed, how a
 * receipt is hashed for chaining, and the offline chain check (used by the
 * `verify-receipts` CLI and the tests; needs only the public key).
 *
 * A receipt is `{leaf_hash, found, verified_at, nonce, prev_nonce,
 * prev_receipt_hash, key_id, signature}`. `signature` is Ed25519 (base64url)
 * over the RFC 8785 canonical JSON of the receipt without `signature`.
 * `prev_receipt_hash` is the SHA-256 (hex) of the canonical JSON of the whole
 * previous receipt (signature included), so a chain cannot be reordered,
 * shortened in the middle or edited without breaking a link or a signature.
 */
import { createPublicKey, verify } from 'node:crypto';
import { canonicalJson, hashCanonical } from '../../lib/hash.ts';

export interface Receipt {
  leaf_hash: string;
  found: boolean;
  verified_at: string;
  nonce: string;
  prev_nonce: string | null;
  prev_receipt_hash: string | null;
  key_id: string;
  signature: string;
}

export type UnsignedReceipt = Omit<Receipt, 'signature'>;

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
}

export const RECEIPT_FIELDS = [
  'found',
  'key_id',
  'leaf_hash',
  'nonce',
  'prev_nonce',
  'prev_receipt_hash',
  'signature',
  'verified_at',
] as const;

/** SHA-256 of the canonical JSON of a full receipt: the value the next receipt's `prev_receipt_hash` carries. */
export function hashReceipt(r: Receipt): string {
  return hashCanonical(r);
}

/** The receipt without its signature: the bytes that are signed. */
export function unsignedPart(r: Receipt): UnsignedReceipt {
  const { signature: _s, ...rest } = r;
  return rest;
}

function verifySignature(jwk: PublicJwk, r: Receipt): boolean {
  // Canonical base64url only: a different string decoding to the same bytes is a modified receipt.
  const sig = Buffer.from(r.signature, 'base64url');
  if (sig.length !== 64 || sig.toString('base64url') !== r.signature) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    return verify(null, Buffer.from(canonicalJson(unsignedPart(r))), key, sig);
  } catch {
    return false;
  }
}

export interface ChainCheck {
  valid: boolean;
  /** One line per receipt: `ok` or the problem. */
  results: Array<{ index: number; nonce: string | null; ok: boolean; problem: string | null }>;
}

/**
 * Checks receipts in chain order with a JWK set: the exact field set, each
 * signature (by `key_id`), and each link (`prev_nonce` = previous `nonce`,
 * `prev_receipt_hash` = hash of the previous receipt). The first receipt may
 * point at an earlier receipt outside the file; its own signature still holds.
 */
export function verifyReceiptChain(receipts: unknown[], keys: PublicJwk[]): ChainCheck {
  const results: ChainCheck['results'] = [];
  let prev: Receipt | null = null;
  for (const [index, raw] of receipts.entries()) {
    const fail = (problem: string) => results.push({ index, nonce: (raw as Receipt | null)?.nonce ?? null, ok: false, problem });
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      fail('not an object');
      continue;
    }
    const r = raw as Receipt;
    const fields = Object.keys(r).sort().join(',');
    if (fields !== RECEIPT_FIELDS.join(',')) {
      fail(`unexpected field set: ${fields}`);
      continue;
    }
    if (!/^[a-f0-9]{64}$/.test(String(r.leaf_hash))) {
      fail('leaf_hash is not 64 lower-case hex');
      continue;
    }
    if (typeof r.found !== 'boolean') {
      fail('found is not a boolean');
      continue;
    }
    const key = keys.find((k) => k.kid === r.key_id);
    if (!key) {
      fail(`no public key with kid ${r.key_id}`);
      continue;
    }
    if (!verifySignature(key, r)) {
      fail('signature does not verify');
      continue;
    }
    if (prev) {
      if (r.prev_nonce !== prev.nonce) {
        fail(`prev_nonce ${r.prev_nonce} is not the previous receipt's nonce ${prev.nonce}`);
        continue;
      }
      if (r.prev_receipt_hash !== hashReceipt(prev)) {
        fail('prev_receipt_hash does not match the previous receipt');
        continue;
      }
    } else if ((r.prev_nonce === null) !== (r.prev_receipt_hash === null)) {
      fail('prev_nonce and prev_receipt_hash must both be set or both be null');
      continue;
    }
    results.push({ index, nonce: r.nonce, ok: true, problem: null });
    prev = r;
  }
  const allOk = results.length === receipts.length && results.every((x) => x.ok);
  return { valid: allOk && receipts.length > 0, results };
}

/**
 * Extracts receipts from what a client saved: an array of receipts, an array
 * of /api/verify responses (each with `receipt`), or `{receipts: [...]}`.
 */
export function extractReceipts(doc: unknown): unknown[] {
  const arr = Array.isArray(doc)
    ? doc
    : Array.isArray((doc as { receipts?: unknown })?.receipts)
      ? (doc as { receipts: unknown[] }).receipts
      : [doc];
  return arr.map((x) => (x && typeof x === 'object' && 'receipt' in x ? (x as { receipt: unknown }).receipt : x));
}
