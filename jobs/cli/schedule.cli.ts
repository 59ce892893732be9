/**
 * `proofline schedule list | apply | set DOMAIN "CRON" [--tz ZONE] | remove DOMAIN | reset DOMAIN`
 * (alias `npm run schedule -- …`)
 *
 * Shows and changes the nightly schedules (BullMQ job schedulers, see
 * jobs/schedules.ts). `set` and `remove` are stored as overrides in Redis and
 * survive re-applying; `reset` returns a domain to its configured schedule;
 * `apply` re-applies configuration + overrides (idempotent; workers do it on start).
 */
import { closeQueues } from '../bullmq.ts';
import { pipelines } from '../pipelines.ts';
import { applySchedules, listSchedules, removeSchedule, resetSchedule, setSchedule } from '../schedules.ts';
import { loadCliConfig, requireRedis, UsageError } from './cli-kit.ts';

function checkDomain(domain: string): void {
  const known = pipelines.map((p) => p.domain.domain);
  if (!known.includes(domain)) throw new UsageError(`unknown domain ${domain}; known: ${known.join(', ')}`);
}

export async function runSchedule(
  cmd: 'list' | 'apply' | 'set' | 'remove' | 'reset',
  args: { domain?: string; cron?: string; tz?: string; json?: boolean },
): Promise<number> {
  const config = loadCliConfig();
  if (args.domain) checkDomain(args.domain);
  await requireRedis(config, 'proofline schedule (schedules live in Redis as BullMQ job schedulers)');
  try {
    switch (cmd) {
      case 'list': {
        const rows = await listSchedules(config);
        if (args.json) console.log(JSON.stringify(rows, null, 2));
        else {
          console.log(['domain', 'cron', 'tz', 'source', 'in redis', 'next run'].join('\t'));
          for (const r of rows) {
            const state = !r.pipeline ? '(no pipeline)' : r.scheduler ? `${r.scheduler.pattern}` : '-';
            console.log([r.domain, r.cron ?? 'off', r.tz, r.source, state, r.scheduler?.next ?? '-'].join('\t'));
          }
        }
        break;
      }
      case 'apply':
        for (const r of await applySchedules(config))
          console.log(`${r.domain}\t${r.action}\t${r.cron ?? 'off'}${r.reason ? `\t(${r.reason})` : ''}`);
        break;
      case 'set':
        await setSchedule(config, args.domain!, args.cron!, args.tz ?? config.SCHEDULE_TZ);
        console.log(`${args.domain}: ${args.cron} (${args.tz ?? config.SCHEDULE_TZ})`);
        break;
      case 'remove':
        await removeSchedule(config, args.domain!);
        console.log(`${args.domain}: off`);
        break;
      case 'reset':
        await resetSchedule(config, args.domain!);
        console.log(`${args.domain}: back to configuration`);
        break;
    }
    return 0;
  } finally {
    await closeQueues();
  }
}
