/**
 * What the monitoring job runner (jobs/monitoring/monitoring.jobs.ts) runs in
 * the process that owns the embedded state store, or in every API process with
 * PostgreSQL state (jobs/cli/monitoring-attach.ts): change detection when the served
 * FMCSA snapshot moves, run notices imported as events, webhook delivery
 * attempts. The composition root passes `monitoringProcessors(deps)` to the
 * runner and puts the runner in `deps.monitoringJobs`.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readRunNotices, type RunNotice } from '../../lib/run-notice.ts';
import { snapshotDir } from '../../lib/warehouse/layout.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import type { StateStore } from '../platform/state.store.ts';
import { detectChanges, lastMonitoredSnapshot, markMonitoredSnapshot } from './changes.queries.ts';
import { attemptDelivery, emitCarrierChanges, emitEvent, listPendingDeliveries, OPERATOR_ACCOUNT } from './webhooks.queries.ts';

/** Emits a run notice as a run.published / run.failed event to the operator's endpoints, and logs it. */
export async function emitRunNotice(store: StateStore, deps: ServiceDeps, n: RunNotice): Promise<string[]> {
  const log = n.type === 'run.failed' ? deps.log.error.bind(deps.log) : deps.log.info.bind(deps.log);
  log(
    { event: n.type, domain: n.domain, run_id: n.run_id, snapshot_id: n.snapshot_id, counts: n.counts, failed_children: n.failed_children },
    n.type,
  );
  return emitEvent(
    store,
    deps.monitoringJobs,
    { message_id: `msg_${n.type.replace('.', '_')}_${n.run_id}`, type: n.type, data: n, accounts: [OPERATOR_ACCOUNT] },
    deps.now(),
  );
}

/** The processors of the monitoring runner, over `store` and the deps' FMCSA reader, options and jobs (read at each call). */
export function monitoringProcessors(deps: ServiceDeps, store: StateStore) {
  return {
    deliver: (id: string, last: boolean) =>
      attemptDelivery(store, id, last, deps.now, { privateOrigins: deps.options.webhookPrivateOrigins }),
    pendingDeliveries: () => listPendingDeliveries(store),
    async pendingDetection() {
      const current = deps.readers.fmcsa?.manifest?.snapshot_id;
      if (!current) return null;
      const last = await lastMonitoredSnapshot(store);
      return last === current ? null : { prev: last, next: current };
    },
    async detect(prev: string | null, next: string) {
      // A previous snapshot pruned from disk cannot be compared: the new one becomes the baseline (logged), so
      // detection is not stuck retrying a comparison that can never run.
      if (prev && !existsSync(path.join(snapshotDir(deps.options.dataDir, 'fmcsa', prev), 'manifest.json'))) {
        deps.log.warn({ prev, next }, 'fmcsa change detection skipped: the previous snapshot is no longer on disk');
        prev = null;
      }
      if (prev) {
        const r = await detectChanges(store, deps.options.dataDir, prev, next, deps.now());
        await emitCarrierChanges(store, deps.monitoringJobs, r.events, deps.now());
        deps.log.info({ prev, next, watched: r.watched, events: r.events.length, ms: r.ms }, 'fmcsa change detection');
      }
      await markMonitoredSnapshot(store, next);
    },
    async importRunNotices() {
      for (const { notice, remove } of await readRunNotices(deps.options.dataDir)) {
        await emitRunNotice(store, deps, notice);
        await remove();
      }
    },
  };
}
