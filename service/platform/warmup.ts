/**
 * Process warm-up: before the server listens, it answers a planned set of
 * requests in process (`app.fetch`), so that the first client request of a
 * new process does not pay for what every process pays once: compiling the
 * request path (JIT), the MCP server's tool schemas, preparing each route's
 * SQL on a pooled DuckDB connection, reading the snapshots' parquet footers
 * and first blocks. Issue 22 measures a route "cold" on a just-started
 * process; this is what a readiness probe would otherwise hide (docs/operations.md).
 *
 * A warm-up request is marked (a WeakSet of the very Request objects made
 * here, so no client can forge the mark): the API layer and the MCP metering
 * let it through without metering, rate limits, the hot-response cache or
 * the query log, so it spends no one's limit and leaves no trace in usage.
 * Answers are read and dropped; any status is fine (a warm-up is never a
 * health check). The whole warm-up stops at its budget.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { H3 } from 'h3';
import type { Logger } from '../../lib/log.ts';

const marked = new WeakSet<Request>();

/** True when `req` is one of the warm-up's own requests (never a client's). */
export function isWarmupRequest(req: Request): boolean {
  return marked.has(req);
}

/** One planned warm-up request: a GET path, or a POST with a JSON body. */
export interface WarmupRequest {
  path: string;
  body?: string;
}

export interface WarmupReport {
  requests: number;
  ms: number;
  /** Answers by status (`"200": 60, ...`); `"error"` counts requests that threw. */
  statuses: Record<string, number>;
  /** True when the budget ran out before every planned request was made. */
  cut_short: boolean;
}

/**
 * Answers `plan` in process, `passes` times (each pass runs up to `concurrency`
 * requests at once, so that the SQL is prepared on more than one pooled
 * connection), stopping when `budgetMs` is spent.
 */
export async function warmUpApp(
  app: H3,
  plan: WarmupRequest[],
  opts: { budgetMs: number; passes?: number; concurrency?: number; log?: Pick<Logger, 'debug'> },
): Promise<WarmupReport> {
  const t0 = performance.now();
  const deadline = t0 + opts.budgetMs;
  const statuses: Record<string, number> = {};
  let requests = 0;
  let cutShort = false;
  const run = async (w: WarmupRequest): Promise<void> => {
    const req = new Request(`http://warmup.invalid${w.path}`, {
      method: w.body === undefined ? 'GET' : 'POST',
      headers:
        w.body === undefined
          ? { accept: 'application/json' }
          : { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: w.body,
    });
    marked.add(req);
    requests++;
    let key = 'error';
    try {
      const res = await app.fetch(req);
      await res.arrayBuffer();
      key = String(res.status);
      if (res.status >= 400) opts.log?.debug({ path: w.path, body: w.body, status: res.status }, 'warm-up answer');
    } catch (err) {
      opts.log?.debug({ err, path: w.path }, 'warm-up request failed');
    }
    statuses[key] = (statuses[key] ?? 0) + 1;
  };
  const width = Math.max(1, opts.concurrency ?? 1);
  for (let pass = 0; pass < (opts.passes ?? 1) && !cutShort; pass++) {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < plan.length) {
        if (performance.now() > deadline) {
          cutShort = true;
          return;
        }
        await run(plan[next++]!);
      }
    };
    await Promise.all(Array.from({ length: pass === 0 ? 1 : width }, lane));
  }
  return { requests, ms: Math.round(performance.now() - t0), statuses, cut_short: cutShort };
}

/**
 * Paths the listener warm-up requests over loopback: documents and probes, which are never metered nor logged
 * (api-middleware.ts DOCUMENT_PATHS and UNMETERED_PATHS), so no mark is needed.
 */
const LISTENER_PATHS = ['/', '/openapi.json', '/docs', '/api/health', '/api/ready'];

/** Requests the unmetered paths through the real socket once, plain and compressed; errors are ignored. */
export async function warmUpListener(base: string, budgetMs: number, log?: Pick<Logger, 'debug'>): Promise<void> {
  const signal = AbortSignal.timeout(budgetMs);
  for (const p of LISTENER_PATHS)
    for (const encoding of ['identity', 'gzip, br']) {
      try {
        const res = await fetch(base + p, { headers: { 'accept-encoding': encoding }, signal });
        await res.arrayBuffer();
      } catch (err) {
        log?.debug({ err, path: p }, 'listener warm-up request failed');
        if (signal.aborted) return;
      }
    }
}

/**
 * A full garbage collection of what start-up left behind, run once after the in-process warm-up and before the
 * server listens (a request accepted during it would wait for it: 39–182 ms for one of the first requests in three of
 * seven processes when it ran after `listen`).
 * Start-up (opening the snapshots, building the search indexes, the warm-up) leaves a few hundred MB of garbage
 * in V8's old generation; without this, the first mark-compact came a few seconds into serving and its
 * incremental steps (up to 11 ms each, `--trace-gc`) landed on client requests (issue 22, warm p99 of the first
 * route measured after start). After it, the next mark-compact is sized from the live heap only. `gc` is exposed
 * to a fresh context only (`--expose-gc` set at run time affects contexts created after it); when that fails,
 * nothing happens. Returns the milliseconds it took, or null when it did not run.
 */
export function collectStartupGarbage(): number | null {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (() => void) | undefined;
    if (typeof gc !== 'function') return null;
    const t0 = performance.now();
    gc();
    return Math.round(performance.now() - t0);
  } catch {
    return null;
  }
}
