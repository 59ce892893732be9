/**
 * Metering of /api requests: identifies the client (Bearer API key → Pro
 * tier, else the IP → Free tier), counts the request (429 with Retry-After
 * over the hourly limit), writes the `RateLimit-Limit/Remaining/Reset/Policy`
 * headers and the `usage_meta` text, and queues one query-log row. An unknown
 * or revoked key is a 401 (never silently downgraded).
 */
import { InvalidApiKeyError } from '../../lib/errors.ts';
import type { ServiceDeps } from './deps.ts';
import {
  CORS_HEADERS,
  EXPOSE_HEADERS,
  finish,
  JSON_TYPE,
  mergeUsageMeta,
  type LayerRequest,
  type LayerResponse,
} from './response-finish.ts';
import { dataSourceOf, usageMetaJson, type ClientIdentity, type Metered, type UsageService } from './usage.service.ts';

/** A counted request under its limit: who, its count, when. */
export interface MeteredRequest {
  id: ClientIdentity;
  m: Metered;
  nowMs: number;
}

/** The headers every metered /api answer carries, in the order they are written. */
export function meteredHeaders(m: Metered): Record<string, string> {
  // An object literal, not `{...CORS_HEADERS, …}`: spreading then adding dashed keys drops V8 into
  // dictionary mode, about 9 µs a request on this machine.
  return {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': EXPOSE_HEADERS,
    'content-type': JSON_TYPE,
    'cache-control': 'private, no-cache',
    vary: 'Authorization',
    'ratelimit-limit': String(m.hourly_limit),
    'ratelimit-remaining': String(m.remaining),
    'ratelimit-reset': String(m.reset_seconds),
    'ratelimit-policy': `${m.hourly_limit};w=3600`,
  };
}

/**
 * Identifies and counts one /api request. Returns the finished 401 or 429
 * answer, or the metered request to continue with. Synchronous unless the
 * counter is in Redis.
 */
export function meterRequest(
  deps: ServiceDeps,
  usage: UsageService,
  req: LayerRequest,
  t0: number,
): LayerResponse | MeteredRequest | Promise<LayerResponse | MeteredRequest> {
  let id: ClientIdentity;
  try {
    id = usage.identify(req.header('authorization') ?? null, req.ip, req.header('user-agent') ?? null);
  } catch (e) {
    if (!(e instanceof InvalidApiKeyError)) throw e;
    const body = JSON.stringify({
      error: `${e.message}: send 'Authorization: Bearer <key>' with an active key, or no Authorization header for the free tier`,
      status: 401,
    });
    return {
      status: 401,
      headers: { ...CORS_HEADERS, 'content-type': JSON_TYPE, 'www-authenticate': 'Bearer realm="proofline", error="invalid_token"' },
      body,
    };
  }
  const nowMs = deps.now().getTime();
  const m = usage.meter(id, nowMs);
  return m instanceof Promise
    ? m.then((mm) => afterCount(deps, usage, req, id, mm, nowMs, t0))
    : afterCount(deps, usage, req, id, m, nowMs, t0);
}

function afterCount(
  deps: ServiceDeps,
  usage: UsageService,
  req: LayerRequest,
  id: ClientIdentity,
  m: Metered,
  nowMs: number,
  t0: number,
): LayerResponse | MeteredRequest {
  if (!m.over_limit) return { id, m, nowMs };
  const headers = meteredHeaders(m);
  headers['retry-after'] = String(m.reset_seconds);
  const body = JSON.stringify({
    error: `hourly limit of ${m.hourly_limit} requests reached for the ${id.tier} tier; retry in ${m.reset_seconds} s`,
    status: 429,
    retry_after_seconds: m.reset_seconds,
  });
  usage.record({
    ts_ms: nowMs,
    client: id.client,
    tier: id.tier,
    agent_type: id.agent_type,
    method: req.method,
    path: req.pathname,
    ticker: null,
    status: 429,
    duration_ms: performance.now() - t0,
  });
  return finish(req, 429, mergeUsageMeta(body, usageMetaText(deps, usage, id, m, req.pathname)), headers, null, null);
}

/** The usage_meta text of a counted request for `pathname` (its data source sets the provenance texts). */
export function usageMetaText(deps: ServiceDeps, usage: UsageService, id: ClientIdentity, m: Metered, pathname: string): string {
  return usageMetaJson(id, m, deps.options.publicBaseUrl, usage.proHourlyLimit, dataSourceOf(pathname));
}
