/**
 * Signing of discovery files. Tier 2 (always): `_signature.contentHash` =
 * "sha256:" + SHA-256 of the RFC 8785 canonical JSON of the document without
 * `_signature` (lib/hash.ts via lib/discovery/verify.ts). Tier 3 (when
 * DISCOVERY_SECP256K1_KEY_PATH is configured): `digitalName` is the key's
 * Ethereum address and `signature` is EIP-191 personal_sign over the
 * contentHash string, so wallet tooling verifies it offline.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bytesToHex } from '@noble/hashes/utils.js';
import { addressFromSecretKey, EIP191_METHOD, generateSecretKey, parseSecretKey, signPersonal } from '../../lib/discovery/signature.ts';
import { computeContentHash } from '../../lib/discovery/verify.ts';

export interface DiscoveryKey {
  secretKey: Uint8Array;
  /** EIP-55 address: the `digitalName` of every signed file. */
  address: string;
}

/** The `method` of tier-2 files. */
export const TIER2_METHOD = 'sha256-rfc8785';
/** EIP-191 is chain-independent and nothing is anchored on a chain, so the network is named as offline. */
export const SIGNATURE_NETWORK = 'offline';

/** Loads a secp256k1 key (64 hex digits) from `file`, generating one there (mode 0600) when the file does not exist. */
export async function loadOrCreateDiscoveryKey(file: string): Promise<DiscoveryKey> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read discovery key ${file}: ${(e as Error).message}`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `0x${bytesToHex(generateSecretKey())}\n`, { mode: 0o600, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err; // another process created it first: use theirs
    });
    text = await readFile(file, 'utf8');
  }
  const secretKey = parseSecretKey(text);
  return { secretKey, address: addressFromSecretKey(secretKey) };
}

/**
 * Returns `doc` with a `_signature` block appended (any existing one
 * replaced). `signedAt` is recorded as given (the stamp of the content).
 */
export function signDiscoveryDocument<T extends Record<string, unknown>>(
  doc: T,
  key: DiscoveryKey | null,
  signedAt: string,
): T & { _signature: Record<string, unknown> } {
  const { _signature: _old, ...body } = doc;
  const contentHash = computeContentHash(body);
  const sig: Record<string, unknown> = key
    ? {
        contentHash,
        canonicalization: 'RFC8785',
        method: EIP191_METHOD,
        digitalName: key.address,
        network: SIGNATURE_NETWORK,
        signedAt,
        signature: signPersonal(contentHash, key.secretKey),
        note: 'signature = EIP-191 personal_sign over the UTF-8 contentHash string; not anchored on any chain',
      }
    : { contentHash, canonicalization: 'RFC8785', method: TIER2_METHOD, signedAt };
  return { ...(body as T), _signature: sig };
}
