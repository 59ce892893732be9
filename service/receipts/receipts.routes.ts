/**
 * GET /api/verify/{leaf_hash}?prev_nonce=: signed verification receipts.
 * GET /.well-known/proofline-keys.json: the public key set (JWKS) receipts are signed with.
 */
import { getRouterParam, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { parseQuery } from '../platform/http.ts';
import { verifyAnswer, keysAnswer } from './receipts.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { receiptContext, verifyLeafHash } from './receipts.queries.ts';

const verifyQuery = z.object({
  prev_nonce: z.string().optional().describe('nonce of a receipt this service issued earlier: the new receipt chains to it'),
});

describeRoute({
  method: 'GET',
  path: '/api/verify/{leaf_hash}',
  family: 'receipts',
  summary: 'Look up an origin leaf, walk its parent chain and get a signed, chainable receipt',
  description:
    "Searches every leaf ever issued (all domains). 404 bodies carry a signed `found: false` receipt. Pass `prev_nonce` (a previous receipt's nonce) to chain receipts; an unknown nonce is a 400.",
  params: { leaf_hash: 'SHA-256 leaf hash, 64 lower-case hex characters' },
  query: verifyQuery,
  response: verifyAnswer,
  statuses: [400, 404, 503],
});
describeRoute({
  method: 'GET',
  path: '/.well-known/proofline-keys.json',
  family: 'receipts',
  metered: false,
  summary: 'Public Ed25519 keys (JWK set) that sign receipts; kid = RFC 7638 thumbprint = receipt key_id',
  response: keysAnswer,
});

export function registerReceiptRoutes(app: H3, deps: ServiceDeps): void {
  app.get('/api/verify/:leaf_hash', async (event) => {
    const q = parseQuery(event, verifyQuery);
    return verifyLeafHash(deps, getRouterParam(event, 'leaf_hash') ?? '', q.prev_nonce ?? null);
  });
  app.get('/.well-known/proofline-keys.json', async () => {
    const { key } = await receiptContext(deps);
    return { keys: [key.publicJwk] };
  });
}
