/**
 * `npm run verify-receipts -- receipts.json --keys proofline-keys.json`
 *
 * Offline check of a chain of verification receipts with only the public key
 * set (the JSON served at /.well-known/proofline-keys.json, saved to a file;
 * or `--key-x <base64url x>` with `--kid <key_id>`). `receipts.json` holds the
 * receipts in chain order: an array of receipts, an array of /api/verify
 * responses, or `{receipts: [...]}`. No network, no data directory.
 * Exit status: 0 valid, 1 invalid, 2 usage error.
 */
import { readFileSync } from 'node:fs';
import { extractReceipts, verifyReceiptChain, type PublicJwk } from '../../service/receipts/receipt-chain.ts';

function usage(msg?: string): never {
  if (msg) console.error(msg);
  console.error('usage: npm run verify-receipts -- <receipts.json> (--keys <jwks.json> | --key-x <x> --kid <key_id>)');
  process.exit(2);
}

const args = process.argv.slice(2);
let file: string | undefined;
let keysFile: string | undefined;
let keyX: string | undefined;
let kid: string | undefined;
for (let i = 0; i < args.length; i++) {
  const a = args[i]!;
  if (a === '--keys') keysFile = args[++i];
  else if (a === '--key-x') keyX = args[++i];
  else if (a === '--kid') kid = args[++i];
  else if (a.startsWith('--')) usage(`unknown option ${a}`);
  else file = a;
}
if (!file) usage('missing receipts file');
let keys: PublicJwk[];
try {
  if (keysFile) keys = (JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: PublicJwk[] }).keys;
  else if (keyX && kid) keys = [{ kty: 'OKP', crv: 'Ed25519', x: keyX, kid }];
  else usage('give --keys <jwks.json>, or --key-x and --kid');
  if (!Array.isArray(keys) || keys.length === 0) usage('the key file has no keys');
} catch (e) {
  usage(`cannot read keys: ${(e as Error).message}`);
}
let doc: unknown;
try {
  doc = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  console.error(`INVALID: cannot parse ${file}: ${(e as Error).message}`);
  process.exit(1);
}
const check = verifyReceiptChain(extractReceipts(doc), keys);
for (const r of check.results)
  console.log(`${r.ok ? 'ok     ' : 'INVALID'} #${r.index} ${r.nonce ?? '-'}${r.problem ? `: ${r.problem}` : ''}`);
console.log(check.valid ? `VALID: chain of ${check.results.length} receipt(s)` : 'INVALID chain');
process.exit(check.valid ? 0 : 1);
