/**
 * Verification receipts on both state backends (issue 20): the embedded
 * default keeps the chain in DATA_DIR/state/receipts.jsonl, PostgreSQL state
 * in the `receipts` table (migration 0002). On each, a chain of lookups made
 * with `prev_nonce` verifies offline (verifyReceiptChain), an unknown
 * `prev_nonce` is a 400 naming it, and the chain outlives the service: a new
 * service on the same store continues it. PostgreSQL skips with a notice
 * without a server (helpers/postgres.ts).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../lib/hash.ts';
import type { Config } from '../../lib/config.ts';
import { verifyReceiptChain, type PublicJwk, type Receipt } from '../../service/receipts/receipt-chain.ts';
import { buildTestService, getJson } from '../helpers/app.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { STATE_BACKENDS } from '../helpers/state-backends.ts';
import { ingestSmallFmcsa } from '../vetting/fmcsa-world.ts';

let root: string;
let config: Config;
beforeAll(async () => {
  root = await tempDir('proofline-receipt-backends-');
  // A published snapshot (any domain) is what /api/verify needs to answer; one for both backends.
  config = await ingestSmallFmcsa(path.join(root, 'src'), path.join(root, 'data'));
}, 180_000);
afterAll(async () => removeDir(root));

describe.each(STATE_BACKENDS)('receipt chains ($name state store)', (backend) => {
  it.skipIf(backend.skip)(
    'chains lookups by prev_nonce into a chain that verifies offline and that a new service on the same store continues',
    async () => {
      const opened = await backend.open();
      try {
        const lookup = async (svc: Awaited<ReturnType<typeof buildTestService>>, i: number, prev: string | null) => {
          const r = await getJson(svc.app, `/api/verify/${sha256Hex(`${backend.name} leaf ${i}`)}${prev ? `?prev_nonce=${prev}` : ''}`);
          expect(r.status).toBe(404); // an unknown leaf still gets a signed found:false receipt
          return r.body.receipt as Receipt;
        };
        const receipts: Receipt[] = [];
        let svc = await buildTestService(config, ['fmcsa'], { state: opened.store });
        for (let i = 0; i < 4; i++) receipts.push(await lookup(svc, i, receipts.at(-1)?.nonce ?? null));
        const bad = await getJson(svc.app, `/api/verify/${sha256Hex('x')}?prev_nonce=${'0'.repeat(32)}`);
        expect(bad).toMatchObject({ status: 400, body: { parameter: 'prev_nonce' } });
        const keys = (await getJson(svc.app, '/.well-known/proofline-keys.json')).body as { keys: PublicJwk[] };
        await svc.close();
        // A new service (new receipt context) on the same store: the last nonce is still known.
        svc = await buildTestService(config, ['fmcsa'], { state: opened.store });
        for (let i = 4; i < 6; i++) receipts.push(await lookup(svc, i, receipts.at(-1)!.nonce));
        await svc.close();
        expect(receipts.map((r) => r.prev_nonce)).toEqual([null, ...receipts.slice(0, -1).map((r) => r.nonce)]);
        expect(verifyReceiptChain(receipts, keys.keys)).toMatchObject({ valid: true });
        // A receipt taken out of the middle breaks the chain.
        expect(verifyReceiptChain([...receipts.slice(0, 2), ...receipts.slice(3)], keys.keys).valid).toBe(false);
      } finally {
        await opened.dispose();
      }
    },
    60_000,
  );
});
