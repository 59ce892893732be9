/**
 * `proofline serve` (alias `npm run serve`; the container's API command): the API over whatever is published in
 * DATA_DIR, with the monitoring jobs attached (change detection at FMCSA publish, run notices, webhook deliveries:
 * docs/monitoring.md; service/ never imports jobs/, so this entry point composes the two). SIGTERM/SIGINT drain it:
 * stop accepting, let in-flight requests finish (bounded by 30 s), exit 0.
 */
import { createLogger } from '../../lib/log.ts';
import { startServer } from '../../service/main.ts';
import { loadCliConfig } from './cli-kit.ts';
import { attachMonitoring } from './monitoring-attach.ts';

/** Serves until SIGTERM/SIGINT; never resolves (the signal handler exits the process). */
export async function runServe(): Promise<number> {
  const config = loadCliConfig();
  const log = createLogger(config.LOG_LEVEL);
  const s = await startServer(config, log, attachMonitoring);
  console.log(`Proofline API listening on ${s.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining in-flight requests');
    setTimeout(() => process.exit(1), 30_000).unref();
    await s.close();
    log.flush?.();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  return new Promise<number>(() => undefined);
}
