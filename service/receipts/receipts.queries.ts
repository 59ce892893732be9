/**
 * Leaf lookups and receipt issuing, transport-free (HTTP and MCP call these).
 *
 * A leaf is looked up among every leaf ever issued: the cumulative
 * `origin_leaves` table of every served domain (registry, transcripts,
 * fmcsa, ...), and the quotes domain's daily chain through `findQuoteLeaf`
 * (quote-day leaves are rebuilt from `quote_bars`, current or superseded, not
 * stored in `origin_leaves`). Its parent chain is walked with `verifyChain`
 * across all domains (a record leaf's parent is its source file's leaf; a
 * quote day's parent is the previous trading day).
 */
import { withMembers } from '../../lib/objects.ts';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { InvalidInputError, NotFoundError, SourceUnavailableError } from '../../lib/errors.ts';
import { loadOrCreateSigningKey, signCanonical, type SigningKey } from '../../lib/keys.ts';
import { verifyChain, type OriginLeaf } from '../../lib/origin.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { LEAF_STORE, leafKey } from '../../lib/warehouse/packed-store.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { findQuoteLeaf } from '../quotes/quotes.queries.ts';
import { hashReceipt, type Receipt, type UnsignedReceipt } from './receipt-chain.ts';
import { ReceiptStore, StateReceiptLog, type ReceiptLog } from './receipt-store.ts';

const FIND_LEAF = /* sql */ `SELECT leaf_hash, 'sha256' AS alg, 'rfc8785' AS canon, kind, source, source_url, retrieved_at,
  content_sha256, record_sha256, parent, table_name
FROM origin_leaves WHERE leaf_hash = $leaf_hash LIMIT 1`;

export const LEAF_HASH_RE = /^[a-f0-9]{64}$/;
export const NONCE_RE = /^[a-f0-9]{32}$/;

export interface FoundLeaf {
  leaf: OriginLeaf;
  domain: string;
  table_name: string | null;
}

/**
 * The leaf `leafHash` from a snapshot's leaf store (lib/warehouse/publish.ts writeLeafStore: every leaf of its
 * `origin_leaves`, the columns of FIND_LEAF in the same order, keyed by the hash's first 28 bits): `undefined` when
 * the snapshot has no store (published before it: FIND_LEAF runs), `null` when the domain has no such leaf. One
 * binary search and one positioned read, no DuckDB query.
 */
async function storedLeaf(reader: SnapshotReader, leafHash: string): Promise<Record<string, unknown> | null | undefined> {
  const store = reader.packed(LEAF_STORE);
  if (!store) return undefined;
  if (!LEAF_HASH_RE.test(leafHash)) return null; // the store holds well-formed hashes only, and so do the leaves
  const v = await store.get(leafKey(leafHash));
  if (v === null) return null;
  return (JSON.parse(v) as Array<Record<string, unknown>>).find((l) => l.leaf_hash === leafHash) ?? null;
}

/** Looks a leaf up in every domain's origin_leaves; null when no domain has it. 503 when no domain is published at all. */
export async function findLeaf(readers: Record<string, SnapshotReader>, leafHash: string): Promise<FoundLeaf | null> {
  let published = 0;
  for (const [domain, reader] of Object.entries(readers)) {
    if (!reader.manifest) continue;
    published++;
    const stored = await storedLeaf(reader, leafHash);
    if (stored) {
      const { table_name, ...leaf } = stored;
      return { leaf: leaf as unknown as OriginLeaf, domain, table_name: (table_name as string | null) ?? null };
    }
    if (stored === null) continue;
    let rows: Awaited<ReturnType<typeof reader.query>>;
    try {
      rows = await reader.query(FIND_LEAF, { leaf_hash: leafHash });
    } catch (e) {
      if (e instanceof SourceUnavailableError) continue;
      throw e;
    }
    const r = rows[0];
    if (r) {
      const { table_name, ...leaf } = r;
      return { leaf: leaf as unknown as OriginLeaf, domain, table_name: (table_name as string | null) ?? null };
    }
  }
  if (published === 0) throw new SourceUnavailableError('no snapshot has been published yet');
  return null;
}

interface ReceiptContext {
  key: SigningKey;
  store: ReceiptLog;
}
const contexts = new WeakMap<ServiceDeps, Promise<ReceiptContext>>();

/** The signing key (deps.signingKey, else DATA_DIR/keys/ed25519.pem) and the receipt store of a service. */
export function receiptContext(deps: ServiceDeps): Promise<ReceiptContext> {
  let c = contexts.get(deps);
  if (!c) {
    c = (async () => ({
      key: deps.signingKey ?? (deps.signingKey = await loadOrCreateSigningKey(path.join(deps.options.dataDir, 'keys', 'ed25519.pem'))),
      // PostgreSQL state (DATABASE_URL): one receipt table for every node; embedded: DATA_DIR/state/receipts.jsonl.
      store: deps.state?.backend === 'postgres' ? new StateReceiptLog(deps.state) : ReceiptStore.forDataDir(deps.options.dataDir),
    }))();
    contexts.set(deps, c);
  }
  return c;
}

/** Issues, stores and returns a signed receipt; `prevNonce` must name a receipt issued before (else 400). */
export async function issueReceipt(deps: ServiceDeps, leafHash: string, found: boolean, prevNonce: string | null): Promise<Receipt> {
  const { key, store } = await receiptContext(deps);
  let prevHash: string | null = null;
  if (prevNonce !== null) {
    prevHash = await store.receiptHash(prevNonce);
    if (!prevHash)
      throw new InvalidInputError(`unknown prev_nonce '${prevNonce}': pass the nonce of a receipt this service issued`, {
        response: { parameter: 'prev_nonce' },
      });
  }
  const unsigned: UnsignedReceipt = {
    leaf_hash: leafHash,
    found,
    verified_at: deps.now().toISOString(),
    nonce: randomBytes(16).toString('hex'),
    prev_nonce: prevNonce,
    prev_receipt_hash: prevHash,
    key_id: key.keyId,
  };
  const receipt: Receipt = withMembers(unsigned, { signature: signCanonical(key, unsigned) });
  await store.append(receipt);
  return receipt;
}

/**
 * `/api/verify/{leaf_hash}`: the leaf, its parent chain and a signed receipt.
 * Throws InvalidInputError (400) for a malformed hash or nonce, NotFoundError
 * (404, carrying the signed `found: false` receipt) for an unknown leaf.
 */
export async function verifyLeafHash(deps: ServiceDeps, leafHash: string, prevNonce: string | null) {
  if (!LEAF_HASH_RE.test(leafHash))
    throw new InvalidInputError(`leaf_hash must be 64 lower-case hex characters (SHA-256), got '${leafHash.slice(0, 80)}'`, {
      response: { parameter: 'leaf_hash' },
    });
  if (prevNonce !== null && !NONCE_RE.test(prevNonce))
    throw new InvalidInputError(`prev_nonce must be 32 lower-case hex characters (a receipt's nonce)`, {
      response: { parameter: 'prev_nonce' },
    });
  const quotes = deps.readers.quotes;
  // The other domains' origin_leaves first (one indexed point query each): the quotes lookup reads parquet views
  // (tens of ms) and finds only quote leaves, which no other domain holds, so the answer is the same in either order.
  const others = Object.fromEntries(Object.entries(deps.readers).filter(([d]) => d !== 'quotes'));
  const early = Object.values(others).some((r) => r.manifest) ? await findLeaf(others, leafHash) : null;
  const quote = !early && quotes?.manifest ? await findQuoteLeaf(quotes, leafHash) : null;
  const found: FoundLeaf | null =
    early ?? (quote ? { leaf: quote.leaf, domain: 'quotes', table_name: quote.table } : await findLeaf(deps.readers, leafHash));
  if (!found) {
    const receipt = await issueReceipt(deps, leafHash, false, prevNonce);
    throw new NotFoundError(`no origin leaf with hash ${leafHash} was ever issued by this service`, {
      response: { leaf_hash: leafHash, found: false, receipt, receipt_hash: hashReceipt(receipt) },
    });
  }
  let chain: { valid: boolean; leaves: OriginLeaf[]; problem: string | null };
  if (quote) {
    // The quote chain (one leaf per trading day back to the source file) is rebuilt and checked by the quotes family.
    const walked = await verifyChain(leafHash, (h) => quote.chain.find((l) => l.leaf_hash === h), quote.chain.length + 1);
    // A truncated walk ends on a parent outside the list ("missing leaf"): every walked leaf was still checked.
    const walkedAll = walked.leaves.length === quote.chain.length;
    chain =
      quote.truncated && walkedAll
        ? {
            valid: quote.valid,
            leaves: quote.chain,
            problem: `chain truncated after ${quote.chain.length} leaves (older trading days not walked)`,
          }
        : walked;
  } else {
    // Parents are looked up in the leaf's own domain first (where a record's file leaf is); a hash names one leaf
    // whichever domain holds it.
    const ordered = Object.fromEntries(
      Object.entries(deps.readers).sort(([a], [b]) => Number(b === found.domain) - Number(a === found.domain)),
    );
    chain = await verifyChain(leafHash, async (h) => (h === leafHash ? found.leaf : (await findLeaf(ordered, h))?.leaf), 1000);
  }
  const receipt = await issueReceipt(deps, leafHash, true, prevNonce);
  return {
    leaf_hash: leafHash,
    found: true,
    domain: found.domain,
    table_name: found.table_name,
    leaf: found.leaf,
    chain: { valid: chain.valid, problem: chain.problem, length: chain.leaves.length, leaves: chain.leaves },
    receipt,
    receipt_hash: hashReceipt(receipt),
    how_to_verify:
      'Recompute leaf_hash = sha256(RFC 8785 JSON of the leaf without leaf_hash) for each chain entry; check the receipt signature (Ed25519 over RFC 8785 JSON of the receipt without signature) with the key at /.well-known/proofline-keys.json, or run `npm run verify-receipts -- receipts.json --keys proofline-keys.json`.',
  };
}
