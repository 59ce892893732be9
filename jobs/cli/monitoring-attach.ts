/**
 * Starts the monitoring jobs (jobs/monitoring/monitoring.jobs.ts) in the API
 * process that owns the state store, with the service's monitoring queries as
 * processors (docs/monitoring.md). Used by `npm start` and `npm run serve`.
 * A process that does not own the store starts none (the owner sends).
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
  if (deps.state.backend === 'postgres') {
    log.warn('monitoring jobs not started: monitoring runs on the embedded state store only (DATABASE_URL is set)');
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
