/**
 * The `proofline` command (package.json "bin": jobs/cli/proofline.bin.mjs; in the repository
 * `node --import tsx jobs/cli/proofline.cli.ts …`, and every `npm run <name>` script is an alias of
 * `proofline <name>`). One subcommand per CLI of jobs/cli/, parsed by commander: `--help` on every command and
 * subcommand, unknown flags and missing arguments rejected before anything runs.
 *
 * Exit codes (docs/operations.md#commands): 0 success, 1 failure, 2 usage (bad flag or argument, unknown domain,
 * invalid configuration, REDIS_URL missing where it is needed). Errors print one line, never a stack trace.
 * Each subcommand's module is imported only when it runs, so `proofline --help` loads neither DuckDB nor BullMQ.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { describeCliError, exitCodeOf } from './cli-kit.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const DOMAINS_HELP = 'registry, fmcsa, quotes, transcripts';

function wholeNumber(min: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < min) throw new InvalidArgumentError(`must be a whole number ≥ ${min}`);
    return Number(v);
  };
}

/** The command tree; `done(code)` receives the exit code of the subcommand that ran. */
export function buildProgram(done: (code: number) => void): Command {
  const program = new Command('proofline')
    .description('Proofline: EDGAR / FMCSA ingest into a DuckDB + parquet warehouse, and the API that serves it')
    .version(pkg.version)
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', '\nExit codes: 0 success, 1 failure, 2 usage. Configuration comes from the environment (docs/configuration.md).');

  program
    .command('start')
    .description('sample (if absent) → in-process ingest of every domain → API (never fetches from outside sources)')
    .action(async () => done(await (await import('./start.cli.ts')).runStart()));

  program
    .command('serve')
    .description('the API alone, over whatever is published in DATA_DIR (SIGTERM drains and exits 0)')
    .action(async () => done(await (await import('./serve.cli.ts')).runServe()));

  program
    .command('ingest')
    .description('run ingest pipelines: in process without REDIS_URL, enqueued for the workers with it')
    .argument('[domains...]', `domains to ingest (${DOMAINS_HELP}; default all)`)
    .option('--force', 'publish even when the inputs are unchanged')
    .option('--full', 'parse every input (an incremental domain otherwise reuses the rows of inputs the current snapshot recorded)')
    .option('--input <dir>', 'input directory (default INPUT_DIR, or the sample)')
    .option('--no-fetch', 'read local inputs only, even where a remote source is configured')
    .option('--in-process', 'run in this process even with REDIS_URL set')
    .option('--wait', 'with REDIS_URL: wait for each enqueued run and exit with its outcome (0 published or skipped, 1 failed)')
    .addOption(new Option('--pipelines-module <file>', 'extra pipelines (tests)').hideHelp())
    .action(async (domains: string[], opts) => done(await (await import('./ingest.cli.ts')).runIngest(domains, opts)));

  program
    .command('worker')
    .description('BullMQ workers for every (or some) domain queue and the SEC queue (needs REDIS_URL); SIGTERM lets running jobs finish')
    .option('--no-schedules', 'do not apply the configured schedules on start')
    .option('--concurrency <n>', 'jobs at once per queue (default WORKER_CONCURRENCY)', wholeNumber(1))
    .option('--domains <list>', 'comma-separated domains to consume (default all)')
    .addOption(new Option('--pipelines-module <file>', 'extra pipelines (tests)').hideHelp())
    .action(async (opts) => done(await (await import('./worker.cli.ts')).runWorker(opts)));

  const schedule = program.command('schedule').description('nightly schedules (BullMQ job schedulers in Redis; needs REDIS_URL)');
  const runSchedule = async (...a: Parameters<typeof import('./schedule.cli.ts').runSchedule>) =>
    done(await (await import('./schedule.cli.ts')).runSchedule(...a));
  schedule
    .command('list', { isDefault: true })
    .description('wanted schedule, what is in Redis, next run (default)')
    .option('--json', 'JSON output')
    .action((opts) => runSchedule('list', opts));
  schedule
    .command('apply')
    .description('re-apply configuration + overrides (idempotent; workers do it on start)')
    .action(() => runSchedule('apply', {}));
  schedule
    .command('set')
    .description('override the schedule of a domain')
    .argument('<domain>', DOMAINS_HELP)
    .argument('<cron>', 'cron pattern, e.g. "0 2 * * *"')
    .option('--tz <zone>', 'time zone (default SCHEDULE_TZ)')
    .action((domain: string, cron: string, opts) => runSchedule('set', { domain, cron, tz: opts.tz }));
  schedule
    .command('remove')
    .description('turn the schedule of a domain off')
    .argument('<domain>', DOMAINS_HELP)
    .action((domain: string) => runSchedule('remove', { domain }));
  schedule
    .command('reset')
    .description('return a domain to its configured schedule')
    .argument('<domain>', DOMAINS_HELP)
    .action((domain: string) => runSchedule('reset', { domain }));

  const jobs = program.command('jobs').description('failed jobs, one job, retry (needs REDIS_URL)');
  const runJobs = async (...a: Parameters<typeof import('./jobs.cli.ts').runJobs>) =>
    done(await (await import('./jobs.cli.ts')).runJobs(...a));
  jobs
    .command('failed', { isDefault: true })
    .description('list failed jobs of every queue; exits 1 when there is any (default)')
    .option('--queue <domain>', 'one queue only')
    .option('--limit <n>', 'at most n per queue', wholeNumber(1), 50)
    .option('--json', 'JSON output')
    .addOption(new Option('--pipelines-module <file>', 'extra pipelines (tests)').hideHelp())
    .action((opts) => runJobs('failed', opts));
  jobs
    .command('inspect')
    .description("a job's data, state, progress, attempts, failure, stack traces and logs")
    .argument('<id>', 'job id (log lines carry it as job_id)')
    .option('--queue <domain>', 'look in one queue only')
    .addOption(new Option('--pipelines-module <file>', 'extra pipelines (tests)').hideHelp())
    .action((id: string, opts) => runJobs('inspect', { id, ...opts }));
  jobs
    .command('retry')
    .description('move a failed job back to waiting')
    .argument('<id>', 'job id')
    .option('--queue <domain>', 'look in one queue only')
    .addOption(new Option('--pipelines-module <file>', 'extra pipelines (tests)').hideHelp())
    .action((id: string, opts) => runJobs('retry', { id, ...opts }));

  program
    .command('sample')
    .description('write the deterministic sample data set')
    .addOption(new Option('--scale <scale>', 'size (default SAMPLE_SCALE)').choices(['small', 'medium', 'full']))
    .option('--seed <n>', 'seed (default SAMPLE_SEED)')
    .option('--out <dir>', 'output directory (default DATA_DIR/sample/<scale>)')
    .option('--force', 'regenerate even when complete')
    .action(async (opts) => done(await (await import('./sample.cli.ts')).runSample(opts)));

  program
    .command('sql')
    .description('ad-hoc DuckDB SQL over the current parquet snapshot of every domain (no SQL: interactive, statements end with ;)')
    .argument('[sql...]', 'one statement (quote it)')
    .option('--csv', 'CSV output (RFC 4180, header row)')
    .option('--json', 'JSON output (array of row objects)')
    .option('--max-rows <n>', 'print at most n rows, 0 = all (default 1000); a line on stderr counts the rest', wholeNumber(0))
    .addHelpText(
      'after',
      '\nWhole results to a file: proofline sql "COPY (SELECT * FROM registry.companies) TO \'companies.parquet\' (FORMAT parquet)"',
    )
    .action(async (sql: string[], opts) => done(await (await import('./sql.cli.ts')).runSql(sql, opts)));

  program
    .command('discover')
    .description('the AI discovery agent against any site (proofline discover --help for its options)')
    .argument('[args...]', 'URL and options')
    .helpOption(false)
    .allowUnknownOption()
    .passThroughOptions()
    .action(async (args: string[]) => done(await (await import('./discover.cli.ts')).main(args)));

  const apikeys = program.command('apikeys').description('Pro-tier API keys (DATA_DIR/state/api-keys.json)');
  const runApiKeys = async (...a: Parameters<typeof import('./apikeys.cli.ts').runApiKeys>) =>
    done(await (await import('./apikeys.cli.ts')).runApiKeys(...a));
  apikeys
    .command('create')
    .description('create a key; prints the secret once')
    .requiredOption('--label <label>', 'who the key is for')
    .option('--limit <n>', 'requests per hour (default RATE_LIMIT_PRO_PER_HOUR)', wholeNumber(1))
    .action((opts) => runApiKeys('create', opts));
  apikeys
    .command('revoke')
    .description('revoke a key')
    .argument('<key_id>', 'key id (apikeys list)')
    .action((keyId: string) => runApiKeys('revoke', { keyId }));
  apikeys
    .command('list')
    .description('every key')
    .action(() => runApiKeys('list', {}));

  const credits = program.command('credits').description('credit accounts in the state database (through the server when it holds it)');
  const runCredits = async (cmd: import('../../service/vetting/credits.ts').CreditsCommand) =>
    done(await (await import('./credits.cli.ts')).runCredits(cmd));
  credits
    .command('grant')
    .description('add n credits (creates the account)')
    .argument('<account>', 'account id (a broker: broker:<broker_id>)')
    .argument('<n>', 'credits', wholeNumber(1))
    .addOption(new Option('--plan <plan>', 'plan of the account').choices(['free', 'payg', 'pack_100', 'pack_500', 'enterprise']))
    .action((account: string, n: number, opts) => runCredits({ op: 'grant', account, n, plan: opts.plan }));
  credits
    .command('key')
    .description('issue an API key bound to the account (printed once)')
    .argument('<account>', 'account id')
    .action((account: string) => runCredits({ op: 'key', account }));
  credits
    .command('show')
    .description('balance and plan')
    .argument('<account>', 'account id')
    .action((account: string) => runCredits({ op: 'show', account }));

  program
    .command('verify-receipts')
    .description('offline check of a chain of verification receipts (exit 0 valid, 1 invalid)')
    .argument('<receipts>', 'JSON file: receipts in chain order, /api/verify answers, or {receipts: [...]}')
    .option('--keys <file>', 'the key set served at /.well-known/proofline-keys.json')
    .option('--key-x <x>', "one Ed25519 public key's base64url x (with --kid)")
    .option('--kid <key_id>', 'its key id')
    .action(async (file: string, opts) => done(await (await import('./verify-receipts.cli.ts')).runVerifyReceipts(file, opts)));

  program
    .command('backfill')
    .description("fill a new warehouse from the SEC's bulk archives, then (--since) the daily index")
    .option('--since <date>', 'YYYY-MM-DD: then run the registry with the daily increment from that day')
    .option('--no-bulk', 'skip the bulk archives')
    .option('--kinds <list>', 'submissions and/or companyfacts', 'submissions,companyfacts')
    .option('--input <dir>', 'input directory (default INPUT_DIR)')
    .action(async (opts) => done(await (await import('./backfill.cli.ts')).runBackfill(opts)));

  program
    .command('edgar-fetch')
    .description("the registry's fetch step alone: download EDGAR files (needs SEC_USER_AGENT)")
    .option(
      '--cik <cik>',
      'CIK to fetch (repeatable; "tickers" = every CIK of the ticker file)',
      (v: string, prev: string[]) => [...prev, v],
      [],
    )
    .option('--tickers', 'fetch the ticker file')
    .option('--out <dir>', 'output directory (default INPUT_DIR)')
    .action(async (opts) => done(await (await import('./edgar-fetch.cli.ts')).runEdgarFetch(opts)));

  program
    .command('eval')
    .description('extraction precision/recall on the real filings corpus; exits 1 below target')
    .option('--corpus <dir>', 'corpus directory (default ../shared/fixtures/sec/corpus)')
    .option('--out <file>', 'result file (default bench/results/eval.json)')
    .option('--quiet', 'no finding list')
    .action(async (opts) => done(await (await import('./eval.cli.ts')).runEval(opts)));

  program
    .command('docs-tables')
    .description("rewrite (or --check) the docs' tables generated from code")
    .option('--check', 'change nothing; exit 1 naming every stale table')
    .action(async (opts) => done(await (await import('./docs-tables.cli.ts')).runDocsTables(opts)));

  return program;
}

/** Parses `argv` (without node and script), runs the subcommand, returns its exit code. */
export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    // Commander already printed its message (and the help hint); --help and --version end with exit code 0.
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    console.error(`proofline: ${describeCliError(e)}`);
    return exitCodeOf(e);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exit(await main(process.argv.slice(2)));
}
