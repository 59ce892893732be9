/**
 * The metering hook of POST /mcp: the same rule as every other door
 * (service/platform/metering.ts, docs/limits.md). Each `tools/call` is one
 * counted request: a registry tool (`meter: 'registry'`, the `sec_*` tools)
 * against the tier's hourly limit, a freight tool against the lookup abuse guard (carrier lookups are
 * unlimited on every plan, vetting specification; `freight_carrier_vet` also
 * spends a credit). Other methods (initialize, tools/list) are not counted.
 *
 * The limit information comes back in the tool result's `_meta`
 * (`_meta["proofline/usage"]`: tier, meter_class, requests_this_hour,
 * hourly_limit, remaining, reset_seconds) and in RateLimit-* headers; over the
 * limit the call is a tool error (`isError: true`) with the same `_meta`, and
 * an unknown or malformed API key is HTTP 401 (JSON-RPC -32001), as on /api.
 */
import { withMembers } from '../../lib/objects.ts';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { H3Event } from 'h3';
import { InvalidApiKeyError, RateLimitedError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { type DoorMetered, doorRequestOf, meterDoor, usageOf } from '../platform/metering.ts';
import { isWarmupRequest } from '../platform/warmup.ts';
import type { MeterClass } from '../platform/usage.service.ts';
import { TOOLS } from './mcp.queries.ts';

/** The `_meta` key of the limit information. */
const USAGE_META_KEY = 'proofline/usage';

const TOOL_METER = new Map(TOOLS.map((t) => [t.name, t.meter]));

/**
 * The metering class of a tool, from its `meter` (tool-kit.ts): `registry` reads count against the tier;
 * `lookup` reads and `vetting` calls (paid in credits) against the lookup abuse guard. An unknown name (answered
 * -32602 by the server) counts as a lookup.
 */
export function meterClassOfTool(name: string): MeterClass {
  return TOOL_METER.get(name) === 'registry' ? 'registry' : 'lookup';
}

type Gate = { counted: DoorMetered } | { refused: Response } | null;

function rpcAnswer(status: number, payload: unknown, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(payload), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** Counts a `tools/call` (null for any other message), or answers it: 401 for a bad key, a tool error over the limit. */
export async function meterMcpCall(deps: ServiceDeps, event: H3Event, body: unknown, cors: Record<string, string>): Promise<Gate> {
  const msg = body as { method?: unknown; id?: unknown; params?: { name?: unknown } } | undefined;
  if (msg?.method !== 'tools/call' || isWarmupRequest(event.req)) return null; // warm-up calls are never counted (warmup.ts)
  const tool = typeof msg.params?.name === 'string' ? msg.params.name : '';
  try {
    const counted = await meterDoor(deps, await usageOf(deps), doorRequestOf(event.req, `/mcp#${tool}`), meterClassOfTool(tool));
    return { counted };
  } catch (e) {
    if (e instanceof InvalidApiKeyError)
      return {
        refused: rpcAnswer(
          401,
          {
            jsonrpc: '2.0',
            error: { code: e.rpcCode, message: `${e.message}: send 'Authorization: Bearer <key>' or none` },
            id: msg.id ?? null,
          },
          { ...cors, 'www-authenticate': 'Bearer realm="proofline", error="invalid_token"' },
        ),
      };
    if (e instanceof RateLimitedError) {
      const ctx = e.context as { response: { usage: unknown }; headers: Record<string, string> };
      return {
        refused: rpcAnswer(
          200,
          {
            jsonrpc: '2.0',
            id: msg.id ?? null,
            result: {
              isError: true,
              content: [{ type: 'text', text: `${tool} refused: ${e.message}` }],
              _meta: { [USAGE_META_KEY]: ctx.response.usage },
            },
          },
          { ...cors, ...ctx.headers },
        ),
      };
    }
    throw e;
  }
}

/**
 * Adds the limit information to the `_meta` of an answer's result (a tool result, a tool error), as its last member.
 * JSON-RPC errors (no result) are left as they are: their limit information is in the RateLimit-* headers.
 */
export function addUsageMeta(message: JSONRPCMessage, usage: unknown): void {
  const result = (message as { result?: { _meta?: Record<string, unknown> } }).result;
  if (result && typeof result === 'object') result._meta = withMembers(result._meta ?? {}, { [USAGE_META_KEY]: usage });
}
