/**
 * The monitoring jobs: change detection when an FMCSA snapshot is published,
 * and webhook deliveries. Both run in the process that owns the embedded state
 * store (service/platform/state.claim.ts), or in every API process with
 * PostgreSQL state (jobs/cli/monitoring-attach.ts), because their results are state rows;
 * the processors are the service's monitoring queries, passed in by the
 * composition root (jobs/cli/), so jobs/ imports no service code.
 *
 * - With REDIS_URL: one BullMQ queue (`<prefix>-monitoring`), deterministic job
 *   ids (`delivery-<id>`, `changes-fmcsa-<prev>-<next>`) so an event enqueued
 *   twice is one job, attempts with BullMQ's exponential backoff.
 * - Without: the same jobs in process (timers), the same ids and backoff.
 *
 * Backoff: attempt n+1 waits base·2^(n-1) after attempt n. The default
 * (base 20 s, 13 attempts) spreads the attempts over 20·(2^12−1) s ≈ 22.75 h,
 * the last one inside 24 h. The last attempt's failure gives the delivery up
 * (the processor disables the endpoint with the reason).
 *
 * Crash safety: deliveries are rows before they are jobs. When the runner
 * starts it enqueues every pending delivery again (a job lost with the process
 * after kill -9 is sent again; receivers de-duplicate on webhook-id, the
 * Standard Webhooks idempotency key).
 */
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger } from '../../lib/log.ts';
import { queueName, redisConnection } from '../../lib/queues.ts';

export interface MonitoringProcessors {
  /** One delivery attempt; `last` is the final attempt of the retry window. */
  deliver(deliveryId: string, last: boolean): Promise<{ status: 'delivered' | 'pending' | 'failed' | 'skipped' }>;
  /** The FMCSA snapshots to compare now ({prev, next}), or null when detection is up to date. */
  pendingDetection(): Promise<{ prev: string | null; next: string } | null>;
  /** Compares prev with next (prev null: records next as the baseline) and emits the events. */
  detect(prev: string | null, next: string): Promise<void>;
  /** Imports run notices written by pipeline processes and emits them (run.published / run.failed). */
  importRunNotices(): Promise<void>;
  /** Deliveries left pending (re-enqueued at start). */
  pendingDeliveries(): Promise<string[]>;
}

export interface MonitoringRunnerOptions {
  redisUrl?: string;
  queuePrefix?: string;
  /** First retry delay (default 20 s). */
  backoffBaseMs?: number;
  /** Attempts per delivery (default 13: ≈ 22.75 h with the default base). */
  attempts?: number;
  /** Deliveries sent at once (default 16). */
  concurrency?: number;
  /** How often to look for a new FMCSA snapshot and run notices (default 30 s; 0: never, tests call tick()). */
  pollMs?: number;
  log: Logger;
}

export interface MonitoringRunner {
  enqueueDelivery(deliveryId: string, key?: string): Promise<void>;
  /** One poll: new snapshot → detection job; run notices → events. */
  tick(): Promise<void>;
  /** Resolves when no job is queued, running or waiting for a retry (in process; BullMQ: waits for the queue to drain). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Job id of a delivery (BullMQ custom ids may not contain ':'). */
export const deliveryJobId = (deliveryId: string, key?: string) => (key ? `delivery-${deliveryId}-${key}` : `delivery-${deliveryId}`);
/** Job id of one change detection. */
export const detectionJobId = (prev: string | null, next: string) => `changes-fmcsa-${prev ?? 'none'}-${next}`;

type JobData = { kind: 'deliver'; delivery_id: string } | { kind: 'detect'; prev: string | null; next: string };

/** Starts the runner (BullMQ when redisUrl is set, else in process) and re-enqueues pending deliveries. */
export async function startMonitoringRunner(p: MonitoringProcessors, opts: MonitoringRunnerOptions): Promise<MonitoringRunner> {
  const base = opts.backoffBaseMs ?? 20_000;
  const attempts = opts.attempts ?? 13;
  const runner = opts.redisUrl ? bullmqRunner(p, opts, base, attempts) : inProcessRunner(p, opts, base, attempts);
  for (const id of await p.pendingDeliveries()) await runner.enqueueDelivery(id);
  let ticking: Promise<void> | null = null;
  const tick = () =>
    (ticking ??= (async () => {
      try {
        await p.importRunNotices();
        const d = await p.pendingDetection();
        if (d) await runner.enqueue({ kind: 'detect', ...d }, detectionJobId(d.prev, d.next));
      } catch (err) {
        opts.log.warn({ err }, 'monitoring poll failed');
      } finally {
        ticking = null;
      }
    })());
  const timer = opts.pollMs === 0 ? null : setInterval(() => void tick(), opts.pollMs ?? 30_000);
  timer?.unref();
  return {
    enqueueDelivery: runner.enqueueDelivery,
    tick,
    idle: runner.idle,
    async close() {
      if (timer) clearInterval(timer);
      await ticking;
      await runner.close();
    },
  };
}

interface BaseRunner {
  enqueue(data: JobData, jobId: string): Promise<void>;
  enqueueDelivery(deliveryId: string, key?: string): Promise<void>;
  idle(): Promise<void>;
  close(): Promise<void>;
}

async function runJob(p: MonitoringProcessors, data: JobData, last: boolean): Promise<boolean> {
  if (data.kind === 'detect') {
    await p.detect(data.prev, data.next);
    return true;
  }
  const r = await p.deliver(data.delivery_id, last);
  return r.status !== 'pending';
}

function inProcessRunner(p: MonitoringProcessors, opts: MonitoringRunnerOptions, base: number, attempts: number): BaseRunner {
  const known = new Set<string>(); // queued, running or waiting for a retry
  const timers = new Set<NodeJS.Timeout>();
  const ready: Array<() => Promise<void>> = [];
  let running = 0;
  let closed = false;
  let waiters: Array<() => void> = [];
  const settle = () => {
    if (known.size === 0) {
      for (const w of waiters) w();
      waiters = [];
    }
  };
  const pump = () => {
    while (!closed && running < (opts.concurrency ?? 16) && ready.length) {
      const job = ready.shift()!;
      running++;
      void job().finally(() => {
        running--;
        pump();
        settle();
      });
    }
  };
  const schedule = (data: JobData, jobId: string, attempt: number) => {
    const run = async () => {
      let done = false;
      try {
        done = await runJob(p, data, attempt >= attempts);
      } catch (err) {
        opts.log.warn({ err, job_id: jobId, attempt }, 'monitoring job failed');
      }
      if (done || attempt >= attempts || closed) {
        known.delete(jobId);
        return;
      }
      const t = setTimeout(
        () => {
          timers.delete(t);
          schedule(data, jobId, attempt + 1);
        },
        base * 2 ** (attempt - 1),
      );
      timers.add(t);
    };
    ready.push(run);
    pump();
  };
  const enqueue = async (data: JobData, jobId: string) => {
    if (closed || known.has(jobId)) return; // deterministic ids: a duplicate is the same job
    known.add(jobId);
    schedule(data, jobId, 1);
  };
  return {
    enqueue,
    enqueueDelivery: (id, key) => enqueue({ kind: 'deliver', delivery_id: id }, deliveryJobId(id, key)),
    idle: () => (known.size === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r))),
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      while (running > 0) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

function bullmqRunner(p: MonitoringProcessors, opts: MonitoringRunnerOptions, base: number, attempts: number): BaseRunner {
  const name = queueName('monitoring', opts.queuePrefix);
  const connection = redisConnection(opts.redisUrl!);
  const queue = new Queue<JobData>(name, { connection });
  const worker = new Worker<JobData>(
    name,
    async (job: Job<JobData>) => {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      // A pending outcome throws so BullMQ retries it with its exponential backoff.
      if (!(await runJob(p, job.data, last))) throw new Error('delivery not accepted yet: retrying');
    },
    { connection, concurrency: opts.concurrency ?? 16 },
  );
  worker.on('failed', (job, err) => {
    if (job?.data.kind === 'detect') opts.log.warn({ err, job_id: job.id }, 'change detection failed');
  });
  const enqueue = async (data: JobData, jobId: string) => {
    await queue.add(data.kind, data, {
      jobId,
      attempts,
      backoff: { type: 'exponential', delay: base },
      removeOnComplete: { age: 7 * 24 * 3600 },
      removeOnFail: { age: 30 * 24 * 3600 },
    });
  };
  return {
    enqueue,
    enqueueDelivery: (id, key) => enqueue({ kind: 'deliver', delivery_id: id }, deliveryJobId(id, key)),
    async idle() {
      for (;;) {
        const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        if (Object.values(c).every((n) => n === 0)) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
