/**
 * Metering of /api requests: identifies the client (Bearer API key → Pro
 * tier, else the IP → Free tier), counts the request (429 with Retry-After
 * over the hourly limit), writes the `RateLimit-Limit/Remaining/Reset/Policy`
 * headers and the `usage_meta` text, and queues one query-log row. An unknown
 * or revoked key is a 401 (never silently downgraded).
 *
 * One rule for every door (docs/limits.md): REST /api (meterRequest, by
 * path), /ai/query and /mcp (meterDoor, by what the call reads) count through
 * the same UsageService with the same classes: SEC registry reads against
 * the tier's hourly limit, carrier lookups (unlimited on every plan, vetting
 * specification) against the abuse guard.
 */
import { withMembers } from '../../lib/objects.ts';
import { InvalidApiKeyError, RateLimitedError } from '../../lib/errors.ts';
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
import {
  dataSourceOf,
  meterClassOf,
  usageMetaJson,
  type ClientIdentity,
  type Metered,
  type MeterClass,
  type UsageService,
} from './usage.service.ts';

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
  /** The meter class of `req.pathname` when the caller knows it already (a hot cache entry keeps it). */
  cls: MeterClass = meterClassOf(req.pathname),
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
      headers: withMembers(CORS_HEADERS, {
        'content-type': JSON_TYPE,
        'www-authenticate': 'Bearer realm="proofline", error="invalid_token"',
      }),
      body,
    };
  }
  const nowMs = deps.now().getTime();
  const m = usage.meter(id, nowMs, cls);
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

/** What a door other than /api knows of its request. */
export interface DoorRequest {
  authorization: string | null;
  ip: string | undefined;
  userAgent: string | null;
  method: string;
  /** The door and what was asked, for the query log (`/ai/query?type=carrier`, `/mcp#freight_carrier_safety`). */
  path: string;
}

/** A door's counted request: the identity, the count, and the limit information a client reads (headers, MCP `_meta`). */
export interface DoorMetered {
  id: ClientIdentity;
  m: Metered;
  cls: MeterClass;
  headers: Record<string, string>;
  /** The limit information in snake_case JSON (MCP `_meta["proofline/usage"]`). */
  usage: {
    tier: ClientIdentity['tier'];
    meter_class: MeterClass;
    requests_this_hour: number;
    hourly_limit: number;
    remaining: number;
    reset_seconds: number;
  };
}

/**
 * Meters one request of a door other than /api (the /api layer meters by
 * path) with the same identity, counters and classes: returns the count, or
 * throws InvalidApiKeyError (401) or RateLimitedError (429, with the limit
 * information in `context.response`). The request is logged like /api ones.
 */
export async function meterDoor(deps: ServiceDeps, usage: UsageService, req: DoorRequest, cls: MeterClass): Promise<DoorMetered> {
  const t0 = performance.now();
  const id = usage.identify(req.authorization, req.ip, req.userAgent);
  const nowMs = deps.now().getTime();
  const m = await usage.meter(id, nowMs, cls);
  const headers = meteredHeaders(m);
  const info = {
    tier: id.tier,
    meter_class: cls,
    requests_this_hour: m.requests_this_hour,
    hourly_limit: m.hourly_limit,
    remaining: m.remaining,
    reset_seconds: m.reset_seconds,
  };
  if (m.over_limit) {
    usage.record({
      ts_ms: nowMs,
      client: id.client,
      tier: id.tier,
      agent_type: id.agent_type,
      method: req.method,
      path: req.path,
      ticker: null,
      status: 429,
      duration_ms: performance.now() - t0,
    });
    const what = cls === 'lookup' ? 'the lookup abuse guard of' : `the ${id.tier} tier's hourly limit of`;
    throw new RateLimitedError(`${what} ${m.hourly_limit} requests reached; retry in ${m.reset_seconds} s`, {
      response: { retry_after_seconds: m.reset_seconds, usage: info },
      headers: withMembers(headers, { 'retry-after': String(m.reset_seconds) }),
    });
  }
  return { id, m, cls, headers, usage: info };
}

/** The usage service every door meters with: the one main.ts built, else the /api layer's (in memory). */
export function usageOf(deps: ServiceDeps): Promise<UsageService> | UsageService {
  if (deps.usage) return deps.usage;
  if (!deps.apiLayer) throw new Error('metering needs deps.usage or the /api layer (createApp installs it)');
  return deps.apiLayer.getUsage();
}

/** A DoorRequest from a web Request (h3's `event.req`, whose `ip` srvx sets). */
export function doorRequestOf(req: Request & { ip?: string }, path: string): DoorRequest {
  return {
    authorization: req.headers.get('authorization'),
    ip: req.ip,
    userAgent: req.headers.get('user-agent'),
    method: req.method,
    path,
  };
}
