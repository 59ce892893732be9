/**
 * The queue dashboard: Bull Board (`@bull-board/api`) over every Proofline
 * queue (one per domain and the SEC queue), showing jobs, progress, errors,
 * stack traces and the kept input of parse failures, with retry/clean
 * actions. `@bull-board/h3` targets h3 v1, so the dashboard runs on Bull
 * Board's Hono adapter and h3 forwards web Requests to it (`fetch`). Only built
 * when REDIS_URL is configured (service/main.ts), and only served behind
 * ADMIN_TOKEN (admin.routes.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { Queue } from 'bullmq';
import { Hono, type MiddlewareHandler } from 'hono';
import { queueNamesOf, redisConnection } from '../../lib/queues.ts';
import type { Config } from '../../lib/config.ts';
import type { QueueDashboard } from '../platform/deps.ts';

/** Where the dashboard is mounted. */
export const DASHBOARD_PATH = '/admin/queues';

export type { QueueDashboard };

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
  '.html': 'text/html; charset=utf-8',
};

/** Serves Bull Board's UI assets from @bull-board/ui (stands in for @hono/node-server's serveStatic). */
function serveStatic(opts: { root: string; rewriteRequestPath: (p: string) => string }): MiddlewareHandler {
  const root = path.resolve(opts.root);
  return async (c, next) => {
    const rel = path.normalize(decodeURIComponent(opts.rewriteRequestPath(c.req.path))).replace(/^([/\\])+/, '');
    const file = path.join(root, rel);
    if (!file.startsWith(root + path.sep)) return next();
    try {
      const body = await readFile(file);
      return c.body(body, 200, {
        'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
        'cache-control': 'public, max-age=3600',
      });
    } catch {
      return next();
    }
  };
}

/** Builds the dashboard over every queue of this deployment (configuration `QUEUE_PREFIX`). */
/** The dashboard over the queues of `domains` (the served domains) and the SEC queue. */
export function createQueueDashboard(config: Config, token: string, domains: readonly string[]): QueueDashboard {
  if (!config.REDIS_URL) throw new Error('the queue dashboard needs REDIS_URL');
  const queues = queueNamesOf(domains, config.QUEUE_PREFIX).map(
    (name) => new Queue(name, { connection: redisConnection(config.REDIS_URL!) }),
  );
  const adapter = new HonoAdapter(serveStatic as never);
  adapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: false, allowRetries: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Proofline queues' } },
  });
  const app = new Hono().route(DASHBOARD_PATH, adapter.registerPlugin());
  return {
    token,
    fetch: async (request) => app.fetch(request),
    async close() {
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}
