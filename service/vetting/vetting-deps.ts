/**
 * Builds what the vetting, care and MCP families need from ServiceDeps, and
 * maps their domain errors onto HTTP (402 credits, 409 stage order)
 * without touching the shared error tree.
 */
import path from 'node:path';
import { HTTPError, type H3Event } from 'h3';
import { PipelineError, SourceUnavailableError } from '../../lib/errors.ts';
import { loadOrCreateSigningKey, type SigningKey } from '../../lib/keys.ts';
import type { ServiceDeps } from '../deps.ts';
import type { StateStore } from '../state/state.store.ts';
import { StageOrderError } from '../care/care.queries.ts';
import { PaymentRequiredError } from './credits.ts';
import type { VettingDeps } from './vetting.queries.ts';

/** The state store, or 503 when this deployment has none or another process on its DATA_DIR owns it. */
export function stateOf(deps: ServiceDeps): StateStore {
  if (deps.state) return deps.state;
  const heldBy = deps.stateHeldBy?.();
  if (heldBy) throw new SourceUnavailableError(`the durable state store is owned by another Proofline process on this DATA_DIR (${heldBy}); vetting, proof-of-care and credit requests are served by that process`, { response: { held_by: heldBy } });
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

export async function vettingDepsOf(deps: ServiceDeps): Promise<VettingDeps> {
  const fmcsa = deps.readers.fmcsa;
  if (!fmcsa) throw new SourceUnavailableError('the fmcsa domain is not served by this instance');
  return { fmcsa, store: stateOf(deps), signingKey: await signingKeyOf(deps), live: deps.liveRefresher ?? null, now: deps.now };
}

/** The request's API key (Authorization: Bearer); its bound credit account pays for vettings. */
export function creditKeyOf(event: H3Event): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(event.req.headers.get('authorization') ?? '');
  return m ? m[1]! : null;
}

/** Rethrows domain errors the shared mapping does not know as HTTP errors with the same JSON body shape. */
export function rethrowAsHttp(e: unknown): never {
  const status = e instanceof PaymentRequiredError ? 402 : e instanceof StageOrderError ? 409 : null;
  if (status !== null) {
    const pe = e as PipelineError;
    throw new HTTPError({ status, message: pe.message, data: (pe.context.response as Record<string, unknown> | undefined) ?? {} });
  }
  throw e;
}

/** Runs a handler body, mapping domain errors. */
export async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    rethrowAsHttp(e);
  }
}
