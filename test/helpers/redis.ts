/**
 * Redis for integration tests: REDIS_URL from the environment (CI starts a
 * real redis-server). Without it, suites skip with a visible notice, except
 * under REQUIRE_REDIS=1 where a missing or unreachable Redis fails.
 */
import net from 'node:net';

export const REDIS_URL = process.env.REDIS_URL;

async function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || 6379) });
    s.setTimeout(1000);
    s.once('connect', () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

export const HAS_REDIS = REDIS_URL ? await reachable(REDIS_URL) : false;
if (!HAS_REDIS) {
  if (process.env.REQUIRE_REDIS === '1')
    throw new Error(`REQUIRE_REDIS=1 but Redis is not reachable at ${REDIS_URL ?? '(REDIS_URL unset)'}`);
  console.warn('[proofline tests] no Redis (set REDIS_URL): BullMQ integration suites are skipped');
}
