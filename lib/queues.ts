/**
 * Queue names and the Redis connection of the BullMQ deployment, shared by
 * the job runners (jobs/bullmq.ts) and the queue dashboard adapter
 * (service/admin/queue-dashboard.ts) so the service never imports jobs/.
 * No BullMQ code here: names and options only.
 */

/** Default queue prefix (QUEUE_PREFIX). */
export const QUEUE_PREFIX = 'proofline';
/** Queue of a domain: `<prefix>-<domain>`. */
export const queueName = (domain: string, prefix: string = QUEUE_PREFIX) => `${prefix}-${domain}`;
/** The queue of every step that reads the SEC live: paused as a whole on the SEC's 403 rate-limit page. */
export const SEC_QUEUE = 'sec';

/** Every queue name of a deployment serving `domains`: one per domain plus the SEC queue. */
export function queueNamesOf(domains: readonly string[], prefix: string = QUEUE_PREFIX): string[] {
  return [...domains.map((d) => queueName(d, prefix)), queueName(SEC_QUEUE, prefix)];
}

/** Redis connection options in the shape BullMQ takes (ioredis options). */
export interface RedisConnectionOptions {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: Record<string, never>;
  /** null: workers must wait for Redis instead of failing a command (BullMQ requires it). */
  maxRetriesPerRequest: null;
}

/** Connection options for BullMQ from REDIS_URL (workers need maxRetriesPerRequest: null). */
export function redisConnection(url: string): RedisConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}
