/**
 * `proofline verify-receipts receipts.json --keys proofline-keys.json` (alias `npm run verify-receipts -- …`)
 *
 * Offline check of a chain of verification receipts with only the public key
 * set (the JSON served at /.well-known/proofline-keys.json, saved to a file;
 * or `--key-x <base64url x>` with `--kid <key_id>`). `receipts.json` holds the
 * receipts in chain order: an array of receipts, an array of /api/verify
 * responses, or `{receipts: [...]}`. No network, no data directory.
 * Exit status: 0 valid, 1 invalid, 2 usage error.
 */
import { readFileSync } from 'node:fs';
import { extractReceipts, type PublicJwk, verifyReceiptChain } from '../../service/receipts/receipt-chain.ts';
import { UsageError } from './cli-kit.ts';

export async function runVerifyReceipts(file: string, opts: { keys?: string; keyX?: string; kid?: string }): Promise<number> {
  let keys: PublicJwk[];
  if (opts.keys) {
    try {
      keys = (JSON.parse(readFileSync(opts.keys, 'utf8')) as { keys: PublicJwk[] }).keys;
    } catch (e) {
      throw new UsageError(`cannot read keys: ${(e as Error).message}`);
    }
  } else if (opts.keyX && opts.kid) keys = [{ kty: 'OKP', crv: 'Ed25519', x: opts.keyX, kid: opts.kid }];
  else throw new UsageError('give --keys <jwks.json>, or --key-x and --kid');
  if (!Array.isArray(keys) || keys.length === 0) throw new UsageError('the key file has no keys');
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`INVALID: cannot parse ${file}: ${(e as Error).message}`);
    return 1;
  }
  const check = verifyReceiptChain(extractReceipts(doc), keys);
  for (const r of check.results)
    console.log(`${r.ok ? 'ok     ' : 'INVALID'} #${r.index} ${r.nonce ?? '-'}${r.problem ? `: ${r.problem}` : ''}`);
  console.log(check.valid ? `VALID: chain of ${check.results.length} receipt(s)` : 'INVALID chain');
  return check.valid ? 0 : 1;
}
