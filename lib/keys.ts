/**
 * The service's Ed25519 signing key (node:crypto): signs verification
 * receipts and vetting records. Loaded from SIGNING_KEY_PATH (PKCS#8 PEM), or
 * generated there on first start in embedded mode (file mode 0600). The public
 * key is published as a JWK set at /.well-known/proofline-keys.json; `key_id`
 * is the RFC 7638 JWK thumbprint, so anyone can check which key signed what.
 *
 * What is signed is always the UTF-8 of the RFC 8785 canonical JSON of the
 * payload (without its `signature` field); the signature is base64url.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { canonicalJson, sha256Hex } from './hash.ts';

export interface SigningKey {
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; alg: 'EdDSA'; use: 'sig' };
}

function thumbprint(x: string): string {
  // RFC 7638: SHA-256 over the canonical JSON of the required members, base64url.
  return Buffer.from(sha256Hex(canonicalJson({ crv: 'Ed25519', kty: 'OKP', x })), 'hex').toString('base64url');
}

export function signingKeyFromPrivate(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  const keyId = thumbprint(jwk.x);
  return { keyId, privateKey, publicKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: keyId, alg: 'EdDSA', use: 'sig' } };
}

/** Loads the PEM key at `file`, creating it (and its folder) when absent. */
export async function loadOrCreateSigningKey(file: string): Promise<SigningKey> {
  try {
    return signingKeyFromPrivate(createPrivateKey(await readFile(file, 'utf8')));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read signing key ${file}: ${(e as Error).message}`);
  }
  const { privateKey } = generateKeyPairSync('ed25519');
  await mkdir(path.dirname(file), { recursive: true });
  // Written whole under a private name, then linked into place: link() fails with EEXIST when another process
  // created the key first (use theirs), and no process ever reads a key file that is still being written (two API
  // nodes starting at once on one DATA_DIR did: ERR_OSSL_UNSUPPORTED on a half-written PEM).
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, file).catch((e) => {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    });
  } finally {
    await rm(tmp, { force: true });
  }
  return signingKeyFromPrivate(createPrivateKey(await readFile(file, 'utf8')));
}

/** Signs the canonical JSON of `payload`; returns base64url. */
export function signCanonical(key: SigningKey, payload: unknown): string {
  return signCanonicalText(key, canonicalJson(payload));
}

/** Signs text that already is a canonical JSON (`canonicalJson`'s output), for a caller that also stores it. */
export function signCanonicalText(key: SigningKey, canonical: string): string {
  return sign(null, Buffer.from(canonical), key.privateKey).toString('base64url');
}

/** Verifies a base64url signature over the canonical JSON of `payload` with a public JWK (`x`) or KeyObject. */
export function verifyCanonical(publicKey: KeyObject | { x: string }, payload: unknown, signature: string): boolean {
  const key =
    'x' in publicKey && typeof (publicKey as { x: unknown }).x === 'string'
      ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: (publicKey as { x: string }).x }, format: 'jwk' })
      : (publicKey as KeyObject);
  try {
    return verify(null, Buffer.from(canonicalJson(payload)), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}
