/**
 * Starts the monitoring jobs (jobs/monitoring/monitoring.jobs.ts) with the
 * service's monitoring queries as processors (docs/monitoring.md). Used by
 * `npm start` and `npm run serve`.
 * - Embedded store: in the API process that owns it; another process starts
 *   none (the owner sends).
 * - PostgreSQL (DATABASE_URL): in every API process. With REDIS_URL they share
 *   one BullMQ queue (deterministic job ids: each detection and delivery runs
 *   once). Without, each node runs detection when the FMCSA snapshot moves
 *   (idempotent: an event, message or delivery is stored once, under its lock)
 *   and sends the deliveries it created; a node that starts re-sends pending
 *   ones (receivers de-duplicate on webhook-id; attempts are numbered from the
 *   committed row).
 */
import type { AttachToDeps } from '../../service/main.ts';
import { monitoringProcessors } from '../../service/monitoring/monitoring.queries.ts';
import { startMonitoringRunner } from '../monitoring/monitoring.jobs.ts';
import { storeBehindDeadlines } from '../../service/platform/state.deadline.ts';

export const attachMonitoring: AttachToDeps = async (deps, config, log) => {
  if (!deps.state) {
    log.warn('monitoring jobs not started: another process owns the state store');
    return undefined;
  }
  // The store itself, not the request path's deadline wrapper (state.deadline.ts): a job waits as long as it takes.
  const runner = await startMonitoringRunner(monitoringProcessors(deps, storeBehindDeadlines(deps.state)), {
    redisUrl: config.REDIS_URL,
    queuePrefix: config.QUEUE_PREFIX,
    log,
  });
  deps.monitoringJobs = runner;
  return runner;
};
