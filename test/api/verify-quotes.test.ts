/**
 * /api/verify on quote-day leaves: they live in the quotes domain's daily
 * chain (rebuilt by findQuoteLeaf), not in origin_leaves; the receipt covers
 * them like any other leaf.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceiptChain } from '../../service/receipts/receipt-chain.ts';
import { buildTestService, getJson, type TestService } from '../helpers/app.ts';
import { removeDir, tempDir, testConfig } from '../helpers/env.ts';
import { fixture, HAS_SHARED } from '../helpers/shared.ts';
import { ingestQuotes, writeInput } from '../quotes/quotes-fixture.ts';

describe.skipIf(!HAS_SHARED)('GET /api/verify on a quote-day leaf', () => {
  let dir: string;
  let svc: TestService;
  beforeAll(async () => {
    dir = await tempDir();
    const input = path.join(dir, 'input');
    const csv = readFileSync(fixture('sec/quotes/alpaca-daily/AAPL_1Day.csv'), 'utf8').split('\n').slice(0, 4).join('\n') + '\n';
    await writeInput(input, 'three/AAPL_3day.csv', csv);
    await ingestQuotes(testConfig(path.join(dir, 'data')), input);
    svc = await buildTestService(testConfig(path.join(dir, 'data')), ['quotes']);
  }, 120_000);
  afterAll(async () => {
    await svc?.deps.usage?.close();
    await svc?.close();
    await removeDir(dir);
  });

  it('walks the three trading days back to the source file and signs a receipt', async () => {
    const history = await getJson(svc.app, '/api/company/AAPL/quote/history?limit=3');
    expect(history.status).toBe(200);
    const head = history.body.quotes[0].origin.leaf_hash as string;
    const r = await getJson(svc.app, `/api/verify/${head}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      found: true,
      domain: 'quotes',
      table_name: 'quote_bars',
      chain: { valid: true, length: 4, problem: null },
    });
    expect(r.body.chain.leaves.map((l: { kind: string }) => l.kind).at(-1)).toBe('source');
    expect(r.body.chain.leaves[1].leaf_hash).toBe(history.body.quotes[1].origin.leaf_hash);
    const keys = (await getJson(svc.app, '/.well-known/proofline-keys.json')).body.keys;
    expect(verifyReceiptChain([r.body.receipt], keys).valid).toBe(true);
  });
});
