/**
 * Configuration, parsed once from the environment by the entry points
 * (`service/main.ts`, `jobs/cli.ts`, ...) and passed down; nothing else reads
 * `process.env`. Every field has a default that makes the embedded mode (no
 * Redis, data under ./data, generated sample data) work with no configuration.
 */
import path from 'node:path';
import { z } from 'zod';

const optionalString = z.string().trim().min(1).optional();
const boolFlag = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .optional()
  .transform((v) => v === '1' || v === 'true' || v === 'yes');
const url = (def?: string) => (def ? z.url().default(def) : z.url().optional());

export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('127.0.0.1'),
  /** Public base URL used in manifests and links; defaults to http://HOST:PORT. */
  PUBLIC_BASE_URL: url(),
  DATA_DIR: z.string().default('./data'),
  /** Where raw input files are read from; defaults to DATA_DIR/sample/<scale> (generated) when unset. */
  INPUT_DIR: optionalString,
  SAMPLE_SCALE: z.enum(['small', 'medium', 'full']).default('small'),
  SAMPLE_SEED: z.coerce.number().int().min(0).default(42),
  /** Published snapshots kept per domain (older ones are pruned). */
  SNAPSHOT_KEEP: z.coerce.number().int().min(1).max(100).default(3),
  /** A snapshot older than this is reported as stale by /api/health. */
  SNAPSHOT_STALE_HOURS: z.coerce.number().positive().default(48),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  // Outside sources. Live fetches refuse to start without SEC_USER_AGENT (SEC fair-access policy).
  SEC_USER_AGENT: z
    .string()
    .trim()
    .regex(/\S+\s+\S+@\S+\.\S+/, 'SEC_USER_AGENT must name you and give a contact e-mail, e.g. "Acme Research ops@acme.example"')
    .optional(),
  SEC_WWW_BASE_URL: url('https://www.sec.gov'),
  SEC_DATA_BASE_URL: url('https://data.sec.gov'),
  /** SEC fair access: at most 10 requests per second across all machines; 9 leaves headroom. */
  SEC_RATE_LIMIT: z.coerce.number().int().min(1).max(10).default(9),
  /** How long every worker stops calling the SEC after its 403 rate-limit page (the SEC blocks for 10 minutes). */
  SEC_403_PAUSE_MS: z.coerce.number().int().min(100).default(600_000),
  /**
   * Registry fetch step (jobs/registry/registry-fetch.ts): CIKs whose submissions and companyfacts each
   * run downloads (comma/space separated), or `tickers` for every CIK of the current ticker file.
   * Unset (and EDGAR_FETCH_TICKERS off): the registry reads local inputs only.
   */
  EDGAR_FETCH_CIKS: optionalString,
  /** Also download the current ticker file (company_tickers_exchange.json) on each run. */
  EDGAR_FETCH_TICKERS: boolFlag,
  /** Which per-CIK files to download. */
  EDGAR_FETCH_KINDS: z.string().regex(/^\s*(submissions|companyfacts)(\s*,\s*(submissions|companyfacts))*\s*$/).default('submissions,companyfacts'),
  /** CIKs per fetch job (one job = one kind for this many CIKs; a transient failure retries that job alone). */
  EDGAR_FETCH_BATCH: z.coerce.number().int().min(1).max(1000).default(25),
  SEC_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000).describe('Timeout of one EDGAR request (www.sec.gov and data.sec.gov); a timed-out request is retried with backoff like a 5xx.'),
  EDGAR_DAILY_INDEX: boolFlag.describe(
    'Registry nightly increment: walk the EDGAR daily index (master.YYYYMMDD.idx) for every day after the cursor kept in the current registry snapshot, and download the complete submission .txt of each filing of EDGAR_DAILY_FORMS by a company of the universe (EDGAR_FETCH_CIKS, default: every CIK of the current ticker file), plus the submissions JSON of every CIK that filed and the companyfacts of every CIK with a new 10-K/10-Q. Off: the per-CIK fetch of EDGAR_FETCH_CIKS only.',
  ),
  EDGAR_DAILY_SINCE: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .describe('First day (YYYY-MM-DD) of the daily-index walk when the registry has no cursor yet (a new warehouse); default: the day before EDGAR_DAILY_UNTIL. A backfill of the last N years sets it.'),
  EDGAR_DAILY_UNTIL: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .describe('Last day (YYYY-MM-DD) of the daily-index walk; default: today (UTC). A missing index of the last two days is not yet published and is asked for again on the next run; an older missing one is a day without filings.'),
  EDGAR_DAILY_FORMS: z
    .string()
    .regex(/^[\w/ -]+(,[\w/ -]+)*$/)
    .default('8-K,8-K/A,10-K,10-K/A,10-Q,10-Q/A,3,4,5,25,25-NSE,15,15-12B,15-12G,15-15D')
    .describe('Form types (comma separated, as the daily index spells them) whose complete submissions the daily walk downloads.'),
  EDGAR_DAILY_RECHECK_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(366)
    .default(7)
    .describe('Days before the cursor whose saved daily indexes are read again (from disk, no request) for filings not yet on disk: a filing whose download failed on an earlier night is fetched on a later one.'),
  FMCSA_DATASETS: optionalString.describe(
    'FMCSA fetch step: DOT open-data portal dataset ids (comma separated, e.g. az4n-8mr2,aayw-vxb3,fx4q-ay7w; ids in docs/first-real-run.md) whose full CSV export (/api/views/{id}/rows.csv?accessType=DOWNLOAD) each fmcsa run downloads into INPUT_DIR/fmcsa/portal/{id}.csv, streamed with its SHA-256 and a conditional GET (ETag / Last-Modified): an unchanged dataset is neither downloaded nor re-ingested. Unset: the fmcsa run reads local files only.',
  ),
  FMCSA_DOWNLOAD_URLS: optionalString.describe('Other FMCSA downloads (comma separated absolute URLs: the SMS results zip, L&I files), fetched like the portal exports into INPUT_DIR/fmcsa/downloads/{file name}.'),
  FMCSA_PORTAL_BASE_URL: z.url().default('https://data.transportation.gov').describe('Base URL of the DOT open-data portal (tests point it at a local replay server).'),
  FMCSA_DOWNLOAD_IDLE_MS: z.coerce.number().int().min(100).default(120_000).describe('An FMCSA download fails (and is retried) when no byte arrives for this long; the transfer itself may take as long as it needs.'),
  FMCSA_WEBKEY: optionalString,
  FMCSA_BASE_URL: url('https://mobile.fmcsa.dot.gov/qc/services'),
  FMCSA_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  POLYGON_API_KEY: optionalString,
  POLYGON_BASE_URL: url('https://api.polygon.io'),
  /** Quotes fetch step: tickers whose daily bars each run downloads from Polygon (needs POLYGON_API_KEY); unset = local inputs only. */
  QUOTES_FETCH_TICKERS: optionalString,
  /** Calendar days of bars per ticker and run (ending today, UTC). */
  QUOTES_FETCH_DAYS: z.coerce.number().int().min(1).max(3650).default(10),
  /** Polygon requests per minute for the quotes fetch step, across all workers with REDIS_URL (free tier: 5). */
  QUOTES_FETCH_GROUPED: boolFlag.describe(
    'Quotes fetch step, market-wide: one Polygon grouped-daily request (/v2/aggs/grouped/locale/us/market/stocks/{date}) per trading day and series gives every ticker\'s bar, so the free tier (5 requests/minute) covers the whole market. Each run fetches every weekday of the last QUOTES_FETCH_DAYS days whose file is not on disk yet (missing days are filled by the next run). Needs POLYGON_API_KEY.',
  ),
  QUOTES_GROUPED_SERIES: z
    .string()
    .regex(/^\s*(adjusted|raw)(\s*,\s*(adjusted|raw))*\s*$/)
    .default('adjusted,raw')
    .describe('Which grouped-daily series to fetch: adjusted (splits and dividends) and/or raw.'),
  QUOTES_FETCH_UNTIL: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional()
    .describe('Last calendar day (YYYY-MM-DD) of the quotes fetch window; default: yesterday (UTC) for grouped daily (a day\'s bars are final once the day is over), today for per-ticker fetches.'),
  POLYGON_RATE_PER_MIN: z.coerce.number().int().min(1).max(100_000).default(5),
  HTTP_USER_AGENT: z.string().default('Proofline/0.1 (+https://proofline.example/contact)'),

  // Keys. Missing key files are generated under DATA_DIR/keys on first start.
  SIGNING_KEY_PATH: optionalString,
  DISCOVERY_SECP256K1_KEY_PATH: optionalString,
  ADMIN_TOKEN: optionalString,

  // Discovery manifest identity.
  ORG_NAME: z.string().default('Proofline'),
  ORG_DOMAIN: z.string().default('localhost'),
  ORG_MISSION: z.string().default('Verifiable company-registry and carrier-vetting data for AI agents.'),
  ORG_SECTOR: z.string().default('financial-data,freight,provenance'),
  MCP_ALLOWED_ORIGINS: z.string().default(''),

  // DuckDB resources (see shared notes: threads=1 and 4-8 pooled connections serve best).
  DUCKDB_MEMORY_LIMIT: z.string().regex(/^\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)$/i).default('1GB'),
  DUCKDB_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  READ_POOL_SIZE: z.coerce.number().int().min(1).max(64).default(4),
  /** How often the API checks for a newly published snapshot. */
  SNAPSHOT_POLL_MS: z.coerce.number().int().min(50).default(1000),
  /** While another API process on the same DATA_DIR owns the state store, how often this one tries to take it over. */
  STATE_CLAIM_RETRY_MS: z.coerce.number().int().min(100).default(5000),

  /** Jobs each worker process runs at once per queue. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  REQUIRE_REDIS: boolFlag,
  /** Requests per hour per client: free tier (no key, per IP) and the default for Pro API keys (service/usage). */
  RATE_LIMIT_FREE_PER_HOUR: z.coerce.number().int().min(1).default(500),
  RATE_LIMIT_PRO_PER_HOUR: z.coerce.number().int().min(1).default(10_000),

  // Operations (jobs/bullmq.ts, jobs/schedules.ts): queue names are `<QUEUE_PREFIX>-<domain>`.
  QUEUE_PREFIX: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,40}$/i).default('proofline'),
  /** A worker that stops renewing its job lock for this long (killed, hung) has its job retried by another. */
  JOB_LOCK_MS: z.coerce.number().int().min(500).default(30_000),
  JOB_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(15_000),
  JOB_MAX_STALLED: z.coerce.number().int().min(0).default(2),
  /** Nightly schedules (cron, 5 or 6 fields) in SCHEDULE_TZ; `off` disables one. */
  SCHEDULE_TZ: z.string().default('America/New_York'),
  /** EDGAR: daily after the SEC rebuilds its nightly bulk archives (around 03:00 ET). */
  SCHEDULE_REGISTRY_CRON: z.string().default('30 4 * * *'),
  /** Quotes: weekdays after the 16:00 ET close and end-of-day settlement. */
  SCHEDULE_QUOTES_CRON: z.string().default('30 17 * * 1-5'),
  TRANSCRIPTS_IR_URLS: optionalString.describe(
    'Transcripts fetch step: investor-relations transcript PDFs to fetch, comma separated TICKER_YYYYQn=URL entries (e.g. INTC_2025Q3=https://www.intc.com/.../Q3-2025-transcript.pdf). Each is fetched once with the IR client (fetch record: URL, time, TLS certificate, addresses) into INPUT_DIR/transcripts/pdf/TICKER_YYYYQn.pdf on the transcripts schedule; one already on disk is not fetched again.',
  ),
  SCHEDULE_TRANSCRIPTS_CRON: z.string().default('0 6 * * *'),
  /** FMCSA census: weekly, Sunday morning. */
  SCHEDULE_FMCSA_CRON: z.string().default('0 5 * * 0'),
});

export type RawConfig = z.infer<typeof configSchema>;

export interface Config extends RawConfig {
  /** Absolute DATA_DIR. */
  dataDir: string;
  /** Absolute input directory (INPUT_DIR or the generated sample). */
  inputDir: string;
  /** Whether INPUT_DIR was left unset, so `npm start` generates the sample there. */
  usesSample: boolean;
  publicBaseUrl: string;
  signingKeyPath: string;
  orgSectors: string[];
  mcpAllowedOrigins: string[];
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses configuration from an environment map. Throws ConfigError naming every invalid variable. */
export function loadConfig(env: Record<string, string | undefined>, cwd = process.cwd()): Config {
  // Empty strings count as unset, as they do in shells and compose files.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  const c = parsed.data;
  const dataDir = path.resolve(cwd, c.DATA_DIR);
  const inputDir = c.INPUT_DIR ? path.resolve(cwd, c.INPUT_DIR) : path.join(dataDir, 'sample', c.SAMPLE_SCALE);
  return {
    ...c,
    dataDir,
    inputDir,
    usesSample: !c.INPUT_DIR,
    publicBaseUrl: (c.PUBLIC_BASE_URL ?? `http://${c.HOST === '0.0.0.0' ? '127.0.0.1' : c.HOST}:${c.PORT}`).replace(/\/$/, ''),
    signingKeyPath: c.SIGNING_KEY_PATH ? path.resolve(cwd, c.SIGNING_KEY_PATH) : path.join(dataDir, 'keys', 'ed25519.pem'),
    orgSectors: c.ORG_SECTOR.split(',').map((s) => s.trim()).filter(Boolean),
    mcpAllowedOrigins: c.MCP_ALLOWED_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean),
  };
}
