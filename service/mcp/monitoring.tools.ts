/**
 * MCP tools for carrier monitoring (docs/monitoring.md): the watchlist
 * operations and the change events, calling the same query functions as
 * /api/watchlist and /api/monitoring/events. Writes carry MCP tool
 * annotations (readOnlyHint false; destructiveHint on removal), reads
 * readOnlyHint true. The account is the request's API key's, else broker_id.
 */
import { z } from 'zod';
import { listChangeEvents } from '../monitoring/changes.queries.ts';
import { addToWatchlist, listWatchlist, removeFromWatchlist, resolveMonitoringAccount } from '../monitoring/watchlist.queries.ts';
import { stateOf } from '../platform/guards.ts';
import type { ServiceDeps } from '../platform/deps.ts';

// The shape of mcp.tools.ts ToolDef, restated so that file can import this one without an import cycle.
interface ToolContext {
  deps: ServiceDeps;
  apiKey: string | null;
}
interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  // biome-ignore lint/suspicious/noExplicitAny: each tool's args are its zod-parsed input (as in mcp.tools.ts)
  run(ctx: ToolContext, args: any): Promise<Record<string, unknown>>;
}

const dot = z.union([
  z.number().int().positive().max(99_999_999),
  z
    .string()
    .trim()
    .regex(/^\d{1,8}$/, 'must be a USDOT number (digits)'),
]);
const brokerId = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (1-64)')
  .optional()
  .describe('the broker whose free account is used when the request carries no API key');
const cursor = z.string().max(40).optional().describe('next_cursor of the previous page');
const looseOutput = z.object({}).loose();

const account = (ctx: ToolContext, brokerIdValue?: string) =>
  resolveMonitoringAccount(stateOf(ctx.deps), { apiKey: ctx.apiKey, brokerId: brokerIdValue });

export const MONITORING_TOOLS: ToolDef[] = [
  {
    name: 'freight_watchlist_add',
    title: 'Watch carriers',
    description:
      "Add carriers (USDOT numbers) to the account's watchlist: change events and carrier.changed webhooks follow each FMCSA publish. The watchlist size is a plan limit (same as POST /api/watchlist).",
    input: z.object({ dot_numbers: z.array(dot).min(1).max(1000), broker_id: brokerId }),
    output: looseOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async (ctx, a) =>
      addToWatchlist(stateOf(ctx.deps), await account(ctx, a.broker_id), a.dot_numbers.map(Number), 'mcp', ctx.deps.now()),
  },
  {
    name: 'freight_watchlist_remove',
    title: 'Stop watching carriers',
    description: "Remove carriers from the account's watchlist (same as DELETE /api/watchlist/{dot}).",
    input: z.object({ dot_numbers: z.array(dot).min(1).max(1000), broker_id: brokerId }),
    output: looseOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (ctx, a) => removeFromWatchlist(stateOf(ctx.deps), await account(ctx, a.broker_id), a.dot_numbers.map(Number)),
  },
  {
    name: 'freight_watchlist',
    title: 'Watchlist',
    description:
      "The account's watched carriers by DOT, each with its state in the served FMCSA snapshot and its last change (same as GET /api/watchlist).",
    input: z.object({ broker_id: brokerId, limit: z.number().int().min(1).max(200).default(50), cursor }),
    output: looseOutput,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async (ctx, a) => listWatchlist(stateOf(ctx.deps), ctx.deps.readers.fmcsa, await account(ctx, a.broker_id), a.limit, a.cursor),
  },
  {
    name: 'freight_monitoring_events',
    title: 'Carrier change events',
    description:
      'Change events of the watched carriers between published FMCSA snapshots: both snapshot ids, kinds, changed fields before/after and origin leaves (same as GET /api/monitoring/events).',
    input: z.object({ broker_id: brokerId, dot: dot.optional(), limit: z.number().int().min(1).max(200).default(50), cursor }),
    output: looseOutput,
    annotations: { readOnlyHint: true, openWorldHint: false },
    run: async (ctx, a) =>
      listChangeEvents(stateOf(ctx.deps), await account(ctx, a.broker_id), {
        limit: a.limit,
        cursor: a.cursor,
        dot: a.dot === undefined ? undefined : Number(a.dot),
      }),
  },
];
