/**
 * secp256k1 signatures for discovery files, with the maintained noble
 * libraries (no chain access). Two schemes are understood:
 *
 * - `eip191-personal-sign` (what we produce): Ethereum `personal_sign` over the
 *   UTF-8 of the `contentHash` string ("sha256:<hex>"), i.e.
 *   keccak256("\x19Ethereum Signed Message:\n" + len + message); any wallet
 *   tooling (`ethers.verifyMessage`, `viem.verifyMessage`) checks it offline.
 * - `raw-digest` (vendor v1.2 `ecdsa-secp256k1`): ECDSA directly over the 32
 *   bytes of the SHA-256 digest in `contentHash` (no prefix, no keccak).
 *
 * Signatures are 65 bytes `r‖s‖v` hex with v ∈ {27, 28} (0/1 accepted), low-s
 * only (EIP-2). Addresses are EIP-55 checksummed.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

export type SignatureScheme = 'eip191-personal-sign' | 'raw-digest';

/** The `method` string we write in `_signature` for tier-3 files. */
export const EIP191_METHOD = 'eip191-personal-sign-secp256k1';

/** EIP-55 mixed-case checksum form of a 20-byte hex address. */
export function toChecksumAddress(address: string): string {
  const hex = address.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{40}$/.test(hex)) throw new TypeError(`not an Ethereum address: ${address}`);
  const h = bytesToHex(keccak_256(utf8ToBytes(hex)));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += parseInt(h[i], 16) >= 8 ? hex[i].toUpperCase() : hex[i];
  return out;
}

/** True when `s` is a 0x-prefixed address whose mixed case (if any) is a valid EIP-55 checksum. */
export function isAddress(s: unknown): s is string {
  if (typeof s !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(s)) return false;
  const body = s.slice(2);
  if (body === body.toLowerCase() || body === body.toUpperCase()) return true;
  return toChecksumAddress(s) === s;
}

/** Ethereum address of a public key (compressed or uncompressed bytes). */
export function addressFromPublicKey(publicKey: Uint8Array): string {
  const point = secp256k1.Point.fromBytes(publicKey);
  const uncompressed = point.toBytes(false);
  return toChecksumAddress(bytesToHex(keccak_256(uncompressed.slice(1)).slice(12)));
}

/** Ethereum address of a 32-byte secret key. */
export function addressFromSecretKey(secretKey: Uint8Array): string {
  return addressFromPublicKey(secp256k1.getPublicKey(secretKey, false));
}

/** A fresh random secret key. */
export function generateSecretKey(): Uint8Array {
  return secp256k1.utils.randomSecretKey();
}

/** Parses a secret key written as 64 hex digits (optional 0x, surrounding whitespace ignored). */
export function parseSecretKey(text: string): Uint8Array {
  const hex = text.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError('secp256k1 key must be 64 hex digits');
  const key = hexToBytes(hex.toLowerCase());
  if (!secp256k1.utils.isValidSecretKey(key)) throw new TypeError('secp256k1 key is out of range');
  return key;
}

/** keccak256 of the EIP-191 version 0x45 envelope of `message`. */
export function eip191Digest(message: string): Uint8Array {
  const body = utf8ToBytes(message);
  const prefix = utf8ToBytes(`\x19Ethereum Signed Message:\n${body.length}`);
  const all = new Uint8Array(prefix.length + body.length);
  all.set(prefix, 0);
  all.set(body, prefix.length);
  return keccak_256(all);
}

function encode(sig: Uint8Array): string {
  // noble's 'recovered' format is recovery‖r‖s; Ethereum wants r‖s‖v with v = 27 + recovery.
  return '0x' + bytesToHex(sig.slice(1)) + (27 + sig[0]).toString(16);
}

/** EIP-191 personal_sign of `message`: 0x-hex r‖s‖v (65 bytes). Deterministic (RFC 6979). */
export function signPersonal(message: string, secretKey: Uint8Array): string {
  return encode(secp256k1.sign(eip191Digest(message), secretKey, { prehash: false, format: 'recovered' }));
}

/** Signs a 32-byte digest directly (vendor v1.2 raw-digest scheme); used by tests to build such files. */
export function signRawDigest(digest: Uint8Array, secretKey: Uint8Array): string {
  return encode(secp256k1.sign(digest, secretKey, { prehash: false, format: 'recovered' }));
}

function recover(sigHex: string, digest: Uint8Array): string | null {
  const hex = sigHex.trim().replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{130}$/.test(hex)) return null;
  const bytes = hexToBytes(hex.toLowerCase());
  let v = bytes[64];
  if (v >= 27) v -= 27;
  if (v !== 0 && v !== 1) return null;
  try {
    const sig = secp256k1.Signature.fromBytes(bytes.slice(0, 64), 'compact').addRecoveryBit(v);
    if (sig.hasHighS()) return null; // EIP-2: malleable high-s signatures are refused
    return addressFromPublicKey(sig.recoverPublicKey(digest).toBytes(false));
  } catch {
    return null;
  }
}

/** Address that produced an EIP-191 signature over `message`, or null when the bytes are not a valid signature. */
export function recoverPersonal(message: string, signature: string): string | null {
  return recover(signature, eip191Digest(message));
}

/** Address that signed the raw 32-byte digest given as 64 hex digits (optionally `sha256:`-prefixed), or null. */
export function recoverRawDigest(digestHex: string, signature: string): string | null {
  const hex = digestHex.replace(/^sha256:/, '').replace(/^0x/i, '');
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  return recover(signature, hexToBytes(hex.toLowerCase()));
}
