/**
 * Nightly schedules as BullMQ job schedulers (`upsertJobScheduler`), one per
 * domain, in SCHEDULE_TZ (default America/New_York, so runs follow US market
 * hours through daylight-saving changes). A scheduler emits a `<domain>:trigger`
 * job on its domain queue; the worker turns a trigger into a plan job for a
 * fresh run id (jobs/bullmq.ts), so a schedule never carries run state. The
 * plan job of a scheduled run fetches (fetch → parse → publish flow) when the
 * domain has a remote source configured (EDGAR_FETCH_*, EDGAR_DAILY_INDEX, QUOTES_FETCH_TICKERS, FMCSA_DATASETS).
 *
 * The configuration (SCHEDULE_<DOMAIN>_CRON) is the default; an operator's
 * `npm run schedule -- set|remove` is stored as an override in Redis
 * (`<prefix>:schedule-overrides`), so re-applying on every worker start keeps
 * it. Applying is idempotent: scheduler ids are the domain names, and
 * `upsertJobScheduler` replaces, never duplicates.
 */
import { CronExpressionParser } from 'cron-parser';
import type { Config } from '../lib/config.ts';
import { InvalidInputError } from '../lib/errors.ts';
import { getQueue, getRedis, knownPipelines } from './bullmq.ts';
import { jobName } from './pipeline.ts';

/** Domain → config field of its cron. Domains without a registered pipeline are skipped when applying. */
export const SCHEDULE_FIELDS = {
  registry: 'SCHEDULE_REGISTRY_CRON',
  quotes: 'SCHEDULE_QUOTES_CRON',
  transcripts: 'SCHEDULE_TRANSCRIPTS_CRON',
  fmcsa: 'SCHEDULE_FMCSA_CRON',
} as const satisfies Record<string, keyof Config>;

export interface ScheduleSpec {
  domain: string;
  /** Cron pattern, or null when disabled (`off`). */
  cron: string | null;
  tz: string;
  source: 'config' | 'override';
}

export interface ScheduleState extends ScheduleSpec {
  /** Whether the domain has a pipeline in this deployment. */
  pipeline: boolean;
  /** What Redis holds now. */
  scheduler: { pattern: string | null; tz: string | null; next: string | null } | null;
}

const OFF = /^(off|none|disabled|)$/i;

function overridesKey(config: Config): string {
  return `${config.QUEUE_PREFIX}:schedule-overrides`;
}

/** Throws InvalidInputError unless `cron` is a valid pattern in `tz`. */
export function validateCron(cron: string, tz: string): void {
  try {
    CronExpressionParser.parse(cron, { tz });
  } catch (e) {
    throw new InvalidInputError(`invalid cron "${cron}" (tz ${tz}): ${(e as Error).message}`);
  }
}

/** The wanted schedules: configuration merged with Redis overrides. */
export async function desiredSchedules(config: Config): Promise<ScheduleSpec[]> {
  const overrides = config.REDIS_URL ? await getRedis(config).hgetall(overridesKey(config)) : {};
  const domains = new Set<string>([
    ...Object.keys(SCHEDULE_FIELDS),
    ...knownPipelines().map((p) => p.domain.domain),
    ...Object.keys(overrides),
  ]);
  const out: ScheduleSpec[] = [];
  for (const domain of [...domains].sort()) {
    const field = (SCHEDULE_FIELDS as Record<string, keyof Config>)[domain];
    const configured = field ? String(config[field] ?? '') : '';
    const o = overrides[domain];
    if (o !== undefined) {
      const { cron, tz } = JSON.parse(o) as { cron: string | null; tz?: string };
      out.push({ domain, cron, tz: tz ?? config.SCHEDULE_TZ, source: 'override' });
    } else if (field) {
      out.push({ domain, cron: OFF.test(configured.trim()) ? null : configured.trim(), tz: config.SCHEDULE_TZ, source: 'config' });
    }
  }
  return out;
}

/**
 * Makes Redis hold exactly the wanted schedulers of every domain with a
 * pipeline: upserts enabled ones (no duplicates: the scheduler id is the
 * domain) and removes disabled ones. Returns what it did.
 */
export async function applySchedules(
  config: Config,
): Promise<Array<{ domain: string; action: 'upserted' | 'removed' | 'skipped'; cron: string | null; reason?: string }>> {
  const known = new Set(knownPipelines().map((p) => p.domain.domain));
  const result = [];
  for (const s of await desiredSchedules(config)) {
    if (!known.has(s.domain)) {
      result.push({ domain: s.domain, action: 'skipped' as const, cron: s.cron, reason: 'no pipeline for this domain in this deployment' });
      continue;
    }
    const queue = getQueue(config, s.domain);
    if (!s.cron) {
      await queue.removeJobScheduler(s.domain);
      result.push({ domain: s.domain, action: 'removed' as const, cron: null });
      continue;
    }
    validateCron(s.cron, s.tz);
    await queue.upsertJobScheduler(
      s.domain,
      { pattern: s.cron, tz: s.tz },
      // A scheduled run fetches from the domain's configured remote source (Pipeline.fetch) before parsing.
      {
        name: jobName(s.domain, 'trigger'),
        data: { domain: s.domain, fetch: true },
        opts: {
          attempts: 3,
          backoff: { type: 'exponential', delay: 5000, jitter: 0.5 },
          removeOnComplete: { age: 30 * 86400 },
          removeOnFail: { age: 30 * 86400 },
        },
      },
    );
    result.push({ domain: s.domain, action: 'upserted' as const, cron: s.cron });
  }
  return result;
}

/** Wanted schedules side by side with what Redis holds. */
export async function listSchedules(config: Config): Promise<ScheduleState[]> {
  const known = new Set(knownPipelines().map((p) => p.domain.domain));
  const out: ScheduleState[] = [];
  for (const s of await desiredSchedules(config)) {
    const sch = known.has(s.domain) ? await getQueue(config, s.domain).getJobScheduler(s.domain) : undefined;
    out.push({
      ...s,
      pipeline: known.has(s.domain),
      scheduler: sch
        ? { pattern: sch.pattern ?? null, tz: sch.tz ?? null, next: sch.next ? new Date(sch.next).toISOString() : null }
        : null,
    });
  }
  return out;
}

/** Sets (and applies) an operator override for a domain's schedule. */
export async function setSchedule(config: Config, domain: string, cron: string, tz = config.SCHEDULE_TZ): Promise<void> {
  validateCron(cron, tz);
  await getRedis(config).hset(overridesKey(config), domain, JSON.stringify({ cron, tz }));
  await applySchedules(config);
}

/** Disables a domain's schedule (override `off`) and removes its scheduler. */
export async function removeSchedule(config: Config, domain: string): Promise<boolean> {
  await getRedis(config).hset(overridesKey(config), domain, JSON.stringify({ cron: null }));
  await applySchedules(config);
  return true;
}

/** Drops a domain's override: the configuration applies again. */
export async function resetSchedule(config: Config, domain: string): Promise<void> {
  await getRedis(config).hdel(overridesKey(config), domain);
  await applySchedules(config);
}

/** Counts the schedulers in a domain queue (tests: re-applying must not duplicate). */
export async function countSchedulers(config: Config, domain: string): Promise<number> {
  return getQueue(config, domain).getJobSchedulersCount();
}
