/**
 * Run notifications (docs/monitoring.md): a run that publishes or fails is
 * written to the structured log (`event: run.published | run.failed`) and
 * left as a run notice for the process owning the state store, which sends it
 * to the operator's webhooks (lib/run-notice.ts). A notice that cannot be
 * written is logged, never fails the run. `proofline jobs failed` is unchanged
 * (it still exits non-zero on failed jobs, for cron-based monitoring).
 */
import type { Logger } from '../lib/log.ts';
import { writeRunNotice, type RunNotice } from '../lib/run-notice.ts';
import type { ChildOutcome } from './processors.ts';

export interface RunNoticeInput {
  type: RunNotice['type'];
  domain: string;
  runId: string;
  snapshotId: string | null;
  outcomes: ChildOutcome[];
  planRejects?: number;
  error?: string | null;
}

export async function notifyRun(dataDir: string, log: Logger, r: RunNoticeInput, now = new Date()): Promise<void> {
  const failed = r.outcomes.filter((o) => o.status === 'failed');
  const notice: RunNotice = {
    type: r.type,
    domain: r.domain,
    run_id: r.runId,
    snapshot_id: r.snapshotId,
    counts: {
      rows: r.outcomes.reduce((a, o) => a + o.rows, 0),
      rejects: r.outcomes.reduce((a, o) => a + o.rejects, 0) + failed.length + (r.planRejects ?? 0),
      failed_children: failed.length,
    },
    failed_children: failed.map((o) => ({ step: o.step, key: o.key, error: o.error ?? null })),
    error: r.error ?? null,
    at: now.toISOString(),
  };
  const fields = {
    event: notice.type,
    domain: notice.domain,
    run_id: notice.run_id,
    snapshot_id: notice.snapshot_id,
    counts: notice.counts,
    failed_children: notice.failed_children,
  };
  if (notice.type === 'run.failed') log.error({ ...fields, error: notice.error }, 'run failed');
  else log.info(fields, 'run published');
  await writeRunNotice(dataDir, notice).catch((err) => log.warn({ err, run_id: r.runId }, 'run notice not written'));
}
