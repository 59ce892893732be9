/**
 * `npm run schedule -- list | apply | set DOMAIN "CRON" [--tz ZONE] | remove DOMAIN | reset DOMAIN`
 *
 * Shows and changes the nightly schedules (BullMQ job schedulers, see
 * jobs/schedules.ts). `set` and `remove` are stored as overrides in Redis and
 * survive re-applying; `reset` returns a domain to its configured schedule;
 * `apply` re-applies configuration + overrides (idempotent; workers do it on start).
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../../lib/config.ts';
import { closeQueues } from '../bullmq.ts';
import { applySchedules, listSchedules, removeSchedule, resetSchedule, setSchedule } from '../schedules.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { tz: { type: 'string' }, json: { type: 'boolean', default: false } },
});
const config = loadConfig(process.env);
if (!config.REDIS_URL) {
  console.error('npm run schedule needs REDIS_URL: schedules live in Redis (BullMQ job schedulers).');
  process.exit(2);
}
const [cmd = 'list', domain, cron] = positionals;
const usage = 'usage: npm run schedule -- list | apply | set DOMAIN "CRON" [--tz ZONE] | remove DOMAIN | reset DOMAIN';
let code = 0;
try {
  switch (cmd) {
    case 'list': {
      const rows = await listSchedules(config);
      if (values.json) console.log(JSON.stringify(rows, null, 2));
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
      if (!domain || !cron) throw new Error(usage);
      await setSchedule(config, domain, cron, values.tz ?? config.SCHEDULE_TZ);
      console.log(`${domain}: ${cron} (${values.tz ?? config.SCHEDULE_TZ})`);
      break;
    case 'remove':
      if (!domain) throw new Error(usage);
      await removeSchedule(config, domain);
      console.log(`${domain}: off`);
      break;
    case 'reset':
      if (!domain) throw new Error(usage);
      await resetSchedule(config, domain);
      console.log(`${domain}: back to configuration`);
      break;
    default:
      throw new Error(usage);
  }
} catch (e) {
  console.error((e as Error).message);
  code = 1;
}
await closeQueues();
process.exit(code);
