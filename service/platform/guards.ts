/**
 * Guards the endpoint families share: the state store (or the 503 that says
 * why there is none), the signing key, the credit account of a request, and
 * the one Bearer-token parser used everywhere a token is read (API keys,
 * credit accounts, the admin token).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { H3Event } from 'h3';
import { SourceUnavailableError } from '../../lib/errors.ts';
import { loadOrCreateSigningKey, type SigningKey } from '../../lib/keys.ts';
import type { ServiceDeps } from './deps.ts';
import { bearerTokenOf } from './http.ts';
import type { StateStore } from './state.store.ts';

export { bearerTokenOf };

/** The state store, or 503 when this deployment has none or another process on its DATA_DIR owns it. */
export function stateOf(deps: ServiceDeps): StateStore {
  if (deps.state) return deps.state;
  const heldBy = deps.stateHeldBy?.();
  if (heldBy)
    throw new SourceUnavailableError(
      `the durable state store is owned by another Proofline process on this DATA_DIR (${heldBy}); vetting, proof-of-care and credit requests are served by that process`,
      { response: { held_by: heldBy } },
    );
  throw new SourceUnavailableError('the durable state store is not configured on this instance');
}

let keyLoading: Promise<SigningKey> | null = null;
/** deps.signingKey, loaded from DATA_DIR/keys/ed25519.pem on first use when main.ts did not provide it. */
export async function signingKeyOf(deps: ServiceDeps): Promise<SigningKey> {
  if (deps.signingKey) return deps.signingKey;
  keyLoading ??= loadOrCreateSigningKey(path.join(deps.options.dataDir, 'keys', 'ed25519.pem'));
  deps.signingKey = await keyLoading;
  keyLoading = null;
  return deps.signingKey;
}

/** The request's API key (Authorization: Bearer); its bound credit account pays for vettings. */
export function creditKeyOf(event: H3Event): string | null {
  return bearerTokenOf(event.req.headers.get('authorization'));
}

/** Constant-time comparison of a presented token with the expected one (digests, so any length takes the same time). */
export function tokensEqual(given: string | null | undefined, expected: string): boolean {
  if (!given) return false;
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());
}
