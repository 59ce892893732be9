/**
 * MCP tools for carrier monitoring (docs/monitoring.md): the watchlist
 * operations and the change events, calling the same query functions as
 * /api/watchlist and /api/monitoring/events. Writes carry MCP tool
 * annotations (readOnlyHint false; destructiveHint on removal), reads
 * readOnlyHint true. The account is the request's API key's, else broker_id.
 */
import { z } from 'zod';
import { listChangeEvents } from '../monitoring/changes.queries.ts';
import {
  addToWatchlist,
  listWatchlist,
  monitoringStateOf,
  removeFromWatchlist,
  resolveMonitoringAccount,
} from '../monitoring/watchlist.queries.ts';
import { bool, int, obj, row, str, type ToolContext, type ToolDef } from './tool-kit.ts';

const dot = z
  .union([
    z.number().int().positive().max(99_999_999),
    z
      .string()
      .trim()
      .regex(/^\d{1,8}$/, 'must be a USDOT number (digits)'),
  ])
  .describe('USDOT number (digits, as a number or a string)');
const brokerId = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (1-64)')
  .optional()
  .describe('the broker whose free account is used when the request carries no API key');
const cursor = z.string().max(200).optional().describe('next_cursor of the previous page (opaque)');
const dotNumbers = z.array(dot).min(1).max(1000).describe('USDOT numbers of the carriers (1 to 1,000)');
const limit = z.number().int().min(1).max(200).default(50).describe('page size (1-200, default 50)');

const account = (ctx: ToolContext, brokerIdValue?: string) =>
  resolveMonitoringAccount(monitoringStateOf(ctx.deps), { apiKey: ctx.apiKey, brokerId: brokerIdValue });

export const MONITORING_TOOLS: ToolDef[] = [
  {
    name: 'freight_watchlist_add',
    title: 'Watch carriers',
    description:
      "Add carriers (USDOT numbers) to the account's watchlist: change events and carrier.changed webhooks follow each FMCSA publish. The watchlist size is a plan limit (same as POST /api/watchlist).",
    input: z.strictObject({ dot_numbers: dotNumbers, broker_id: brokerId }),
    output: obj({ account_id: str, added: z.array(int), already_watched: z.array(int), watched: int, limit: int }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    meter: 'lookup',
    run: async (ctx, a) =>
      addToWatchlist(monitoringStateOf(ctx.deps), await account(ctx, a.broker_id), a.dot_numbers.map(Number), 'mcp', ctx.deps.now()),
  },
  {
    name: 'freight_watchlist_remove',
    title: 'Stop watching carriers',
    description: "Remove carriers from the account's watchlist (same as DELETE /api/watchlist/{dot}).",
    input: z.strictObject({ dot_numbers: dotNumbers, broker_id: brokerId }),
    output: obj({ account_id: str, removed: z.array(int), not_watched: z.array(int) }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    meter: 'lookup',
    run: async (ctx, a) => removeFromWatchlist(monitoringStateOf(ctx.deps), await account(ctx, a.broker_id), a.dot_numbers.map(Number)),
  },
  {
    name: 'freight_watchlist',
    title: 'Watchlist',
    description:
      "The account's watched carriers by DOT, each with its state in the served FMCSA snapshot and its last change (same as GET /api/watchlist).",
    input: z.strictObject({ broker_id: brokerId, limit, cursor }),
    output: obj({
      account_id: str,
      plan: str,
      auto_watch: bool,
      watched: int,
      watchlist_limit: int,
      limit: int,
      next_cursor: str.optional(),
      carriers: z.array(row),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    meter: 'lookup',
    run: async (ctx, a) =>
      listWatchlist(monitoringStateOf(ctx.deps), ctx.deps.readers.fmcsa, await account(ctx, a.broker_id), a.limit, a.cursor),
  },
  {
    name: 'freight_monitoring_events',
    title: 'Carrier change events',
    description:
      'Change events of the watched carriers between published FMCSA snapshots: both snapshot ids, kinds, changed fields before/after and origin leaves (same as GET /api/monitoring/events).',
    input: z.strictObject({ broker_id: brokerId, dot: dot.optional(), limit, cursor }),
    output: obj({ account_id: str, limit: int, next_cursor: str.optional(), events: z.array(row) }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    meter: 'lookup',
    run: async (ctx, a) =>
      listChangeEvents(monitoringStateOf(ctx.deps), await account(ctx, a.broker_id), {
        limit: a.limit,
        cursor: a.cursor,
        dot: a.dot === undefined ? undefined : Number(a.dot),
      }),
  },
];
