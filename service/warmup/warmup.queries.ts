/**
 * What the process warm-up asks (service/platform/warmup.ts): every GET route
 * of the route registry and every read-only MCP tool, once, with real keys
 * drawn from the served snapshots (a ticker, a DOT number, a person, ...), so
 * that each route runs its real queries before the first client does.
 *
 * Left out: routes with side effects or state of their own (`/api/verify/…`
 * and `sec_verify` store a signed receipt; custody chains belong to clients;
 * admin routes), table downloads, and any route whose path parameter has no
 * key here. The monitoring reads run as a fixed broker (WARMUP_BROKER):
 * reads only.
 */
import { z } from 'zod';
import type { Logger } from '../../lib/log.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import { listMcpTools } from '../mcp/mcp.queries.ts';
import type { Readers } from '../platform/deps.ts';
import { listRoutes } from '../platform/route-registry.ts';
import type { H3 } from 'h3';
import { type WarmupReport, type WarmupRequest, warmUpApp } from '../platform/warmup.ts';

const KEY_SQL: Record<string, string> = {
  registry: loadSql('./registry-warmup-keys.sql', import.meta.url),
  fmcsa: loadSql('./fmcsa-warmup-keys.sql', import.meta.url),
  quotes: loadSql('./quotes-warmup-keys.sql', import.meta.url),
  transcripts: loadSql('./transcripts-warmup-keys.sql', import.meta.url),
};

const keysSchema = z.object({
  ticker: z.string().nullable().optional(),
  person: z.string().nullable().optional(),
  leaf_hash: z.string().nullable().optional(),
  dot: z.coerce.number().nullable().optional(),
  name_word: z.string().nullable().optional(),
  state: z.string().nullable().optional(),
  vin: z.string().nullable().optional(),
  topic: z.string().nullable().optional(),
});

/** One real value per key, by domain (absent when the domain is not served or has no such row). */
export interface WarmupKeys {
  ticker?: string;
  person?: string;
  leaf_hash?: string;
  dot?: number;
  carrier_word?: string;
  state?: string;
  vin?: string;
  quote_ticker?: string;
  transcript_ticker?: string;
  topic?: string;
}

/** Reads the warm-up keys from each served snapshot; a domain that cannot answer gives none (logged at debug). */
export async function loadWarmupKeys(readers: Readers, log?: Pick<Logger, 'debug'>): Promise<WarmupKeys> {
  const keys: WarmupKeys = {};
  const read = async (domain: string) => {
    const r = readers[domain];
    const sql = KEY_SQL[domain];
    if (!r?.manifest || !sql) return null;
    try {
      const [row] = await r.query(sql);
      return row ? keysSchema.parse(row) : null;
    } catch (err) {
      log?.debug({ err, domain }, 'warm-up keys unavailable');
      return null;
    }
  };
  const [registry, fmcsa, quotes, transcripts] = await Promise.all(['registry', 'fmcsa', 'quotes', 'transcripts'].map(read));
  const set = <K extends keyof WarmupKeys>(k: K, v: WarmupKeys[K] | null | undefined) => {
    if (v !== null && v !== undefined) keys[k] = v;
  };
  set('ticker', registry?.ticker);
  set('person', registry?.person);
  set('leaf_hash', registry?.leaf_hash);
  set('dot', fmcsa?.dot);
  set('carrier_word', fmcsa?.name_word);
  set('state', fmcsa?.state);
  set('vin', fmcsa?.vin);
  set('quote_ticker', quotes?.ticker);
  set('transcript_ticker', transcripts?.ticker);
  set('topic', transcripts?.topic);
  return keys;
}

/** Routes and tools the warm-up never calls (side effects, client state, bulk downloads). */
const SKIP_PATH = /^\/(admin\/|mcp$|api\/verify\/|api\/care\/|api\/export\/\{)/;
const SKIP_TOOL = new Set(['sec_verify']);
/**
 * The broker the monitoring reads are warmed as (watchlist, events, settings, webhooks, deliveries): they are reads
 * only, so they prepare their state-store SQL and write nothing, whatever that broker's account holds; the answers
 * are dropped.
 */
const WARMUP_BROKER = '_proofline_warmup_';
const MONITORING_PATH = /^\/api\/(watchlist|monitoring|webhooks)/;

function pathValue(route: string, name: string, k: WarmupKeys): string | number | undefined {
  switch (name) {
    case 'ticker':
      return route.includes('/quote') ? k.quote_ticker : route.includes('/transcripts') ? k.transcript_ticker : k.ticker;
    case 'dot':
      return k.dot;
    case 'name':
      return k.person;
    default:
      return undefined;
  }
}

/** Query parameters a route is warmed with, by name, when its query schema takes them. */
function queryValue(route: string, name: string, k: WarmupKeys): string | number | undefined {
  switch (name) {
    case 'dot':
      return route === '/api/carriers' ? undefined : k.dot; // a name search, not a DOT lookup
    case 'name':
      return route === '/api/carriers' ? k.carrier_word : undefined;
    case 'q':
      // Company search: a ticker names one. /ai/query with q is a metered door of its own (discovery.routes.ts):
      // warmed without it (the query document).
      return route === '/ai/query' ? undefined : k.ticker;
    case 'topic':
      return k.topic;
    case 'vin':
      return route === '/api/crashes' ? undefined : k.vin;
    case 'broker_id':
      return MONITORING_PATH.test(route) ? WARMUP_BROKER : undefined;
    default:
      return undefined;
  }
}

function toolArg(tool: string, prop: string, k: WarmupKeys): unknown {
  switch (prop) {
    case 'dot_number':
    case 'dot':
      return k.dot;
    case 'dot_numbers':
      return k.dot === undefined ? undefined : [k.dot];
    case 'ticker':
      return /quote/.test(tool) ? k.quote_ticker : /transcript/.test(tool) ? k.transcript_ticker : k.ticker;
    case 'name':
      return tool.startsWith('freight') ? k.carrier_word : k.person;
    case 'query':
    case 'q':
      return k.carrier_word;
    case 'topic':
      return k.topic;
    case 'vin':
      return k.vin;
    case 'state':
      return k.state;
    case 'broker_id':
      return tool === 'freight_watchlist' || tool === 'freight_monitoring_events' ? WARMUP_BROKER : undefined;
    default:
      return undefined;
  }
}

/** The warm-up's requests: each GET route, then each read-only MCP tool, with the keys filled in. */
export function planWarmupRequests(k: WarmupKeys): WarmupRequest[] {
  const plan: WarmupRequest[] = [];
  for (const r of listRoutes()) {
    if (r.method !== 'GET' || SKIP_PATH.test(r.path)) continue;
    let ok = true;
    const p = r.path.replace(/\{([^}]+)\}/g, (_m, n: string) => {
      const v = pathValue(r.path, n, k);
      if (v === undefined) ok = false;
      return encodeURIComponent(String(v));
    });
    if (!ok) continue;
    const q = new URLSearchParams();
    for (const name of Object.keys(r.query?.shape ?? {})) {
      const v = queryValue(r.path, name, k);
      if (v !== undefined) q.set(name, String(v));
    }
    plan.push({ path: q.size ? `${p}?${q}` : p });
  }
  let id = 0;
  for (const t of listMcpTools()) {
    if (!t.read_only || SKIP_TOOL.has(t.name)) continue;
    const args: Record<string, unknown> = {};
    let ok = true;
    for (const prop of t.parameters) {
      const v = toolArg(t.name, prop, k);
      if (v !== undefined) args[prop] = v;
      else if (t.required.includes(prop)) ok = false;
    }
    if (!ok) continue;
    plan.push({
      path: '/mcp',
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: t.name, arguments: args } }),
    });
  }
  return plan;
}

/**
 * Warms each later snapshot of `readers` before it is swapped in: when a reader finds a new snapshot, the whole
 * plan (keys drawn from the staged snapshot) is answered in process with that snapshot staged for these requests
 * only (lib/warehouse/reader.ts, beforeSwap), then the reader swaps. Clients keep reading the old snapshot
 * meanwhile, so none is the first on the new snapshot's connection pool. Returns a function that stops it.
 */
export function warmEachSnapshotBeforeSwap(
  app: H3,
  readers: Readers,
  opts: { budgetMs: number; concurrency: number; log: Pick<Logger, 'debug' | 'info'> },
): () => void {
  const stops = Object.values(readers).map((reader) =>
    reader.beforeSwap(async (manifest, domain) => {
      const plan = planWarmupRequests(await loadWarmupKeys(readers, opts.log));
      const report: WarmupReport = await warmUpApp(app, plan, { ...opts, passes: 2 });
      opts.log.info({ ...report, domain, snapshot_id: manifest.snapshot_id }, 'warm-up done (new snapshot, before its swap)');
    }),
  );
  return () => {
    for (const stop of stops) stop();
  };
}
