/** secp256k1 signatures (EIP-191 and the vendor raw-digest scheme), addresses, and the per-document verdict. */
import { describe, expect, it } from 'vitest';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import {
  addressFromSecretKey,
  computeContentHash,
  eip191Digest,
  generateSecretKey,
  isAddress,
  parseSecretKey,
  recoverPersonal,
  recoverRawDigest,
  signPersonal,
  signRawDigest,
  toChecksumAddress,
  verifyDocument,
} from '../../lib/discovery/index.ts';
import { hashOf, sealed } from './discovery-helpers.ts';

// web3.js documentation vector for eth.accounts.sign('Some data', key).
const WEB3_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const WEB3_ADDRESS = '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23';
const WEB3_SIG =
  '0xb91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c';

describe('signPersonal / recoverPersonal (EIP-191)', () => {
  it('reproduces the web3.js documentation vector', () => {
    const key = parseSecretKey(WEB3_KEY);
    expect(addressFromSecretKey(key)).toBe(WEB3_ADDRESS);
    expect(bytesToHex(eip191Digest('Some data'))).toBe('1da44b586eb0729ff70a73c326926f6ed5a25f5b056e7f47fbc6e58d86871655');
    expect(signPersonal('Some data', key)).toBe(WEB3_SIG);
    expect(recoverPersonal('Some data', WEB3_SIG)).toBe(WEB3_ADDRESS);
  });

  it('recovers a different address for a different message, and null for junk', () => {
    expect(recoverPersonal('Some datA', WEB3_SIG)).not.toBe(WEB3_ADDRESS);
    expect(recoverPersonal('Some data', '0x1234')).toBeNull();
    expect(recoverPersonal('Some data', WEB3_SIG.slice(0, -2) + '1d')).toBeNull(); // v = 29
  });

  it('refuses high-s (malleable) signatures', () => {
    const sig = hexToBytes(WEB3_SIG.slice(2));
    const s = BigInt('0x' + bytesToHex(sig.slice(32, 64)));
    const highS = secp256k1.Point.CURVE().n - s;
    const flipped = '0x' + bytesToHex(sig.slice(0, 32)) + highS.toString(16).padStart(64, '0') + (sig[64] === 27 ? '1c' : '1b');
    expect(recoverPersonal('Some data', flipped)).toBeNull();
  });
});

describe('recoverRawDigest (vendor v1.2 ecdsa-secp256k1)', () => {
  it('recovers the signer of the raw SHA-256 digest, not of its EIP-191 envelope', () => {
    const key = generateSecretKey();
    const contentHash = `sha256:${'ab'.repeat(32)}`;
    const sig = signRawDigest(hexToBytes('ab'.repeat(32)), key);
    expect(recoverRawDigest(contentHash, sig)).toBe(addressFromSecretKey(key));
    expect(recoverPersonal(contentHash, sig)).not.toBe(addressFromSecretKey(key));
  });
});

describe('toChecksumAddress (EIP-55)', () => {
  it.each([
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ])('checksums %s', (a) => {
    expect(toChecksumAddress(a.toLowerCase())).toBe(a);
    expect(isAddress(a)).toBe(true);
    expect(isAddress(a.replace(/[a-f]/, (c) => c.toUpperCase()))).toBe(false);
  });
});

describe('verifyDocument', () => {
  const obs = { observedAt: '2026-11-22T00:00:00.000Z' };
  const doc = {
    specVersion: '1.1.1-draft',
    generated: '2026-11-01T00:00:00Z',
    organization: { name: 'X', nested: { deep: [1, 2, { k: 'v' }] } },
  };

  it('changes the content hash on a nested edit, and reports match/mismatch/absent', () => {
    const signed = sealed(doc);
    expect(verifyDocument(signed, 'u', obs).hash.status).toBe('match');
    const edited = structuredClone(signed);
    edited.organization.nested.deep[2] = { k: 'w' };
    expect(computeContentHash(edited)).not.toBe(computeContentHash(signed));
    expect(verifyDocument(edited, 'u', obs).hash.status).toBe('mismatch');
    expect(verifyDocument(doc, 'u', obs).hash.status).toBe('absent');
    expect(verifyDocument(doc, 'u', obs).tier).toBe(1);
  });

  it('derives tiers 2, 3 and 4 from the fields present', () => {
    const t3 = { digitalName: WEB3_ADDRESS, network: 'polygon', signedAt: '2026-11-02T00:00:00Z', method: 'x' };
    expect(verifyDocument(sealed(doc), 'u', obs).tier).toBe(2);
    expect(verifyDocument(sealed(doc, t3), 'u', obs).tier).toBe(3);
    expect(
      verifyDocument(sealed(doc, { ...t3, anchoredAt: '2026-11-03T00:00:00Z', identityContract: '0x' + '1'.repeat(40) }), 'u', obs).tier,
    ).toBe(4);
  });

  it('verifies origin for both schemes, and never for a revoked key', () => {
    const key = parseSecretKey(WEB3_KEY);
    const contentHash = hashOf(doc);
    const base = { contentHash, digitalName: WEB3_ADDRESS, network: 'offline', signedAt: '2026-11-02T00:00:00Z' };
    const eip = verifyDocument(
      { ...doc, _signature: { ...base, method: 'eip191-personal-sign-secp256k1', signature: signPersonal(contentHash, key) } },
      'u',
      obs,
    );
    expect(eip.signature).toMatchObject({ status: 'verified', scheme: 'eip191-personal-sign', recovered: WEB3_ADDRESS });
    expect(eip.originVerified).toBe(true);
    const raw = verifyDocument(
      { ...doc, _signature: { ...base, method: 'ecdsa-secp256k1', signature: signRawDigest(hexToBytes(contentHash.slice(7)), key) } },
      'u',
      obs,
    );
    expect(raw.signature).toMatchObject({ status: 'verified', scheme: 'raw-digest' });
    const contract = '0x' + '2'.repeat(40);
    const anchored = {
      ...doc,
      _signature: {
        ...base,
        method: 'eip191-personal-sign-secp256k1',
        anchoredAt: '2026-11-03T00:00:00Z',
        identityContract: contract,
        signature: signPersonal(contentHash, key),
      },
    };
    const revoked = verifyDocument(anchored, 'u', { ...obs, isRevoked: (c, a) => c === contract && a === WEB3_ADDRESS });
    expect(revoked.tier).toBe(4);
    expect(revoked.signature.status).toBe('revoked');
    expect(revoked.originVerified).toBe(false);
  });

  it('does not verify origin when the signature is good but the content was edited afterwards', () => {
    const key = parseSecretKey(WEB3_KEY);
    const contentHash = hashOf(doc);
    const signed = {
      ...structuredClone(doc),
      _signature: {
        contentHash,
        digitalName: WEB3_ADDRESS,
        network: 'offline',
        signedAt: '2026-11-02T00:00:00Z',
        method: 'eip191-personal-sign-secp256k1',
        signature: signPersonal(contentHash, key),
      },
    };
    signed.organization.name = 'Y';
    const v = verifyDocument(signed, 'u', obs);
    expect(v.signature.status).toBe('verified');
    expect(v.hash.status).toBe('mismatch');
    expect(v.originVerified).toBe(false);
  });

  it('never throws on odd input', () => {
    for (const odd of [null, 42, 'text', [], { _signature: 'x' }, { _signature: { contentHash: 7, signature: 'zz' } }]) {
      expect(() => verifyDocument(odd, 'u', obs)).not.toThrow();
    }
  });
});
