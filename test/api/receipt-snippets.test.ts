/**
 * The receipt-signature checks printed in docs/provenance.md (Python and JavaScript, ~10 lines each) work: each is
 * cut out of the doc and run against a receipt signed the way the service signs them (and against a tampered copy).
 * The Python one skips without python3 and its `cryptography` package, unless REQUIRE_PYTHON=1.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { signCanonical, signingKeyFromPrivate } from '../../lib/keys.ts';
import { type Receipt, verifyReceiptChain } from '../../service/receipts/receipt-chain.ts';
import { REPO_ROOT } from '../helpers/shared.ts';

const doc = readFileSync(path.join(REPO_ROOT, 'docs/provenance.md'), 'utf8');
function snippet(name: string): string {
  const at = doc.indexOf(`<!-- snippet:${name} -->`);
  expect(at, name).toBeGreaterThan(0);
  const m = /```\w+\n([\s\S]*?)```/.exec(doc.slice(at));
  return m![1]!;
}

const key = signingKeyFromPrivate(generateKeyPairSync('ed25519').privateKey);
const jwks = { keys: [key.publicJwk] };
const unsigned = {
  leaf_hash: 'a'.repeat(64),
  found: true,
  verified_at: '2026-11-25T12:00:00.000Z',
  nonce: '0123456789abcdef0123456789abcdef',
  prev_nonce: null,
  prev_receipt_hash: null,
  key_id: key.keyId,
};
const receipt = { ...unsigned, signature: signCanonical(key, unsigned) } as Receipt;
const tampered = { ...receipt, found: false };

const python = spawnSync('python3', ['-c', 'import cryptography'], { encoding: 'utf8' }).status === 0;
if (!python && process.env.REQUIRE_PYTHON === '1') throw new Error('REQUIRE_PYTHON=1 but python3 with cryptography is missing');

describe('receipt signature snippets in docs/provenance.md', () => {
  it('signs a receipt the service would accept', () => {
    expect(verifyReceiptChain([receipt], jwks.keys).valid).toBe(true);
  });

  it('JavaScript: accepts the receipt and rejects a tampered one', async () => {
    const dir = path.join(REPO_ROOT, 'test-results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `receipt-snippet-${process.pid}.mjs`);
    writeFileSync(file, snippet('receipt-js'));
    const { receiptSignatureOk } = (await import(pathToFileURL(file).href)) as {
      receiptSignatureOk: (r: unknown, k: unknown) => boolean;
    };
    expect(receiptSignatureOk(receipt, jwks)).toBe(true);
    expect(receiptSignatureOk(tampered, jwks)).toBe(false);
  });

  it.skipIf(!python)('Python: accepts the receipt and rejects a tampered one', () => {
    const program = `${snippet('receipt-python')}\nimport sys\nprint(receipt_signature_ok(json.loads(sys.argv[1]), json.loads(sys.argv[2])))\n`;
    const run = (r: unknown) =>
      execFileSync('python3', ['-c', program, JSON.stringify(r), JSON.stringify(jwks)], { encoding: 'utf8' }).trim();
    expect(run(receipt)).toBe('True');
    expect(run(tampered)).toBe('False');
  });
});
