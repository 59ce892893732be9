/**
 * Usage metering: who the client is (API key, else IP), which tier and hourly
 * limit apply, the count in the current hour, the `usage_meta` block merged
 * into every /api JSON body and the query log entry. Cheap by construction:
 * a Map lookup for the key, one counter increment (memory, or one Redis round
 * trip), one push into the log buffer.
 */
import { withMembers } from '../../lib/objects.ts';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { ApiKeyStore, type ApiKeyRepository } from '../../lib/api-keys.ts';
import { InvalidApiKeyError } from '../../lib/errors.ts';
import { bearerTokenOf } from './http.ts';
import type { Logger } from '../../lib/log.ts';
import { AGENT_TYPES, classifyAgent, type AgentType } from './agent-type.ts';
import { QueryLog, type QueryLogBuffer, type QueryLogEntry } from './query-log.ts';
import { PgQueryLog } from './query-log.postgres.ts';
import { CircuitBreaker, type BreakerReport } from './deadline.ts';
import { MemoryRateCounter, RedisRateCounter, WINDOW_SECONDS, type RateCounter } from './rate-counter.ts';

export const DEFAULT_FREE_HOURLY_LIMIT = 500;
export const DEFAULT_PRO_HOURLY_LIMIT = 10_000;
/** Abuse guard of carrier lookups (LOOKUP_GUARD_PER_HOUR): lookups are unlimited on every plan (vetting specification, Limits). */
export const DEFAULT_LOOKUP_GUARD_PER_HOUR = 20_000;

/**
 * The one metering rule of every door that serves data (REST /api, /ai/query,
 * /mcp, bulk exports; docs/limits.md): what a request reads decides its count.
 * - `registry`: SEC registry data (companies, filings, people, signals,
 *   quotes, transcripts, search, receipts): the tier's hourly limit.
 * - `lookup`: FMCSA carrier data and the vetting/care services, whose rate the
 *   vetting specification leaves unlimited on every plan (credits pay for
 *   vettings): a separate hourly count per client under the abuse guard.
 */
export type MeterClass = 'registry' | 'lookup';

export type Tier = 'free' | 'pro';

export interface ClientIdentity {
  /** `key:<key_id>` or `ip:<hash>`: the unit limits and logs count by. */
  client: string;
  tier: Tier;
  hourly_limit: number;
  agent_type: AgentType;
  /** Per-client pieces of a hot answer, built once per memoised identity (service/platform/hot-path.ts). */
  hot?: unknown;
}

export interface Metered {
  requests_this_hour: number;
  hourly_limit: number;
  remaining: number;
  /** Seconds until the window resets (next clock hour). */
  reset_seconds: number;
  over_limit: boolean;
}

export interface UsageOptions {
  dataDir: string;
  freeHourlyLimit?: number;
  proHourlyLimit?: number;
  /** When given, counters live in Redis (shared by every server process). */
  redis?: Redis;
  log?: Logger;
  /** Query-log flush interval. */
  flushMs?: number;
  /** Abuse guard of lookups per client and hour (LOOKUP_GUARD_PER_HOUR). */
  lookupGuardPerHour?: number;
  /** Deadline of one Redis counter call in ms (REDIS_COMMAND_TIMEOUT_MS; default 250). */
  redisTimeoutMs?: number;
  /** Where API key records live when not in the key file (PostgreSQL state: service/platform/api-keys.state.ts). */
  keyRepository?: ApiKeyRepository;
  /** DATABASE_URL: the query log lives in PostgreSQL (query-log.postgres.ts), shared by every node; else a DuckDB file under dataDir. */
  databaseUrl?: string;
}

/** The query log's counters as /api/health reports them (UsageService.queryLogReport). */
export interface QueryLogReport {
  backend: 'duckdb' | 'postgres';
  unsent_rows: number;
  dropped_rows: number;
  written_rows: number;
  max_unsent_rows: number;
}

/** Identities memoised per client string at most (a flood of distinct IPs must not grow memory). */
const ID_MEMO_MAX = 10_000;
const AGENT_INDEX = Object.fromEntries(AGENT_TYPES.map((t, i) => [t, i])) as Record<AgentType, number>;

function remember(memo: Map<string, Array<ClientIdentity | undefined>>, key: string, agent: number, id: ClientIdentity): ClientIdentity {
  let slots = memo.get(key);
  if (!slots) {
    if (memo.size >= ID_MEMO_MAX) memo.clear();
    slots = new Array<ClientIdentity | undefined>(AGENT_TYPES.length).fill(undefined);
    memo.set(key, slots);
  }
  slots[agent] = id;
  return id;
}

const ipHashMemo = new Map<string, string>();
function hashIp(ip: string): string {
  let h = ipHashMemo.get(ip);
  if (!h) {
    h = `ip:${createHash('sha256').update(ip).digest('hex').slice(0, 16)}`;
    if (ipHashMemo.size > 10_000) ipHashMemo.clear();
    ipHashMemo.set(ip, h);
  }
  return h;
}

export class UsageService {
  readonly freeHourlyLimit: number;
  readonly proHourlyLimit: number;
  readonly lookupGuardPerHour: number;
  /**
   * The identity of a recent Authorization header (or IP), one per agent type
   * (indexed like AGENT_TYPES): a request from a known client costs a Map hit
   * instead of a regex, a key lookup and a new object, and the identity can
   * carry pieces built once for that client. Dropped whenever the key file is
   * re-read (a revoked key must not stay memoised).
   */
  private readonly byAuthorization = new Map<string, Array<ClientIdentity | undefined>>();
  private readonly byIp = new Map<string, Array<ClientIdentity | undefined>>();
  private memoGeneration = -1;

  private constructor(
    readonly keys: ApiKeyStore,
    private readonly counter: RateCounter,
    readonly queryLog: QueryLogBuffer,
    opts: UsageOptions,
  ) {
    this.freeHourlyLimit = opts.freeHourlyLimit ?? DEFAULT_FREE_HOURLY_LIMIT;
    this.proHourlyLimit = opts.proHourlyLimit ?? DEFAULT_PRO_HOURLY_LIMIT;
    this.lookupGuardPerHour = opts.lookupGuardPerHour ?? DEFAULT_LOOKUP_GUARD_PER_HOUR;
  }

  static async create(opts: UsageOptions): Promise<UsageService> {
    const keys = new ApiKeyStore(opts.dataDir, 2000, opts.keyRepository);
    await keys.load();
    const counter = opts.redis
      ? new RedisRateCounter(opts.redis, undefined, new CircuitBreaker('redis', { timeoutMs: opts.redisTimeoutMs ?? 250 }))
      : new MemoryRateCounter();
    const queryLog = opts.databaseUrl
      ? await PgQueryLog.open(opts.databaseUrl, { log: opts.log, flushMs: opts.flushMs })
      : await QueryLog.open(path.join(opts.dataDir, 'state', 'query-log.duckdb'), { log: opts.log, flushMs: opts.flushMs });
    return new UsageService(keys, counter, queryLog, opts);
  }

  /**
   * Identifies the client of a request. `authorization` is the raw header;
   * a Bearer key that is unknown or revoked throws InvalidApiKeyError.
   */
  identify(authorization: string | null, ip: string | undefined, userAgent: string | null): ClientIdentity {
    const agent_type = classifyAgent(userAgent);
    const agent = AGENT_INDEX[agent_type];
    this.keys.recheck();
    if (this.keys.generation !== this.memoGeneration) {
      this.byAuthorization.clear();
      this.byIp.clear();
      this.memoGeneration = this.keys.generation;
    }
    if (authorization !== null && authorization !== undefined) {
      const known = this.byAuthorization.get(authorization)?.[agent];
      if (known) return known;
      const token = bearerTokenOf(authorization);
      // A presented Authorization that is not `Bearer <key>` (empty, `Bearer` alone, Basic) is a 401, never the free tier.
      if (!token) throw new InvalidApiKeyError("the Authorization header is not 'Bearer <key>'");
      {
        const rec = this.keys.lookup(token);
        if (!rec) throw new InvalidApiKeyError('invalid or revoked API key');
        const id: ClientIdentity = {
          client: `key:${rec.key_id}`,
          tier: 'pro',
          hourly_limit: rec.hourly_limit ?? this.proHourlyLimit,
          agent_type,
          hot: undefined,
        };
        return remember(this.byAuthorization, authorization, agent, id);
      }
    }
    const addr = ip ?? 'unknown';
    return (
      this.byIp.get(addr)?.[agent] ??
      remember(this.byIp, addr, agent, {
        client: hashIp(addr),
        tier: 'free',
        hourly_limit: this.freeHourlyLimit,
        agent_type,
        hot: undefined,
      })
    );
  }

  /** Counts one request against the client's hourly window (synchronous with in-memory counters, a promise with Redis). */
  meter(id: ClientIdentity, nowMs: number, cls: MeterClass = 'registry'): Metered | Promise<Metered> {
    const nowS = Math.floor(nowMs / 1000);
    const windowStart = nowS - (nowS % WINDOW_SECONDS);
    const limit = cls === 'lookup' ? this.lookupGuardPerHour : id.hourly_limit;
    const n = this.counter.hit(cls === 'lookup' ? `${id.client}|lookup` : id.client, windowStart);
    return typeof n === 'number' ? this.metered(limit, n, nowS, windowStart) : n.then((c) => this.metered(limit, c, nowS, windowStart));
  }

  private metered(limit: number, n: number, nowS: number, windowStart: number): Metered {
    return {
      requests_this_hour: n,
      hourly_limit: limit,
      remaining: Math.max(0, limit - n),
      reset_seconds: windowStart + WINDOW_SECONDS - nowS,
      over_limit: n > limit,
    };
  }

  /** The Redis counters' deadline state and how many requests were counted in memory instead (for /api/health). */
  dependencyReport(): Record<string, BreakerReport & { counted_in_memory: number }> {
    const c = this.counter;
    return c instanceof RedisRateCounter ? { redis: withMembers(c.breaker.report(), { counted_in_memory: c.countedInMemory }) } : {};
  }

  /**
   * The query log's counters (for /api/health): rows accepted and not yet written (on PostgreSQL, kept while it is
   * down), dropped at the bound (the newest beyond `max_unsent_rows`), and written since this process started.
   */
  queryLogReport(): QueryLogReport {
    const q = this.queryLog;
    return {
      backend: q.file === 'postgres' ? 'postgres' : 'duckdb',
      unsent_rows: q.unsent,
      dropped_rows: q.dropped,
      written_rows: q.written,
      max_unsent_rows: q.maxUnsent,
    };
  }

  /** Queues one query-log row (never awaited by requests). */
  record(entry: QueryLogEntry): void {
    this.queryLog.push(entry);
  }

  private readonly closers: Array<() => Promise<void>> = [];

  /** Registers something to close with the service (the Redis client). */
  onClose(fn: () => Promise<void>): void {
    this.closers.push(fn);
  }

  private closing: Promise<void> | null = null;

  /** Closes the keys, counters, query log and registered closers once; a later call waits for the same close. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.keys.close();
    await this.counter.close();
    await this.queryLog.close();
    for (const fn of this.closers) await fn();
  }
}

/**
 * What an /api path serves: FMCSA's public data (carriers, safety, crashes,
 * inspections, enforcement, red flags, vetting records), Proofline's own
 * proof-of-care records, or the SEC's public data (the company registry and
 * everything else). It sets the provenance texts of `usage_meta`.
 */
export type DataSource = 'sec' | 'fmcsa' | 'care';
const FMCSA_PATH =
  /^\/api\/(?:carriers?|safety|crashes|inspections|enforcement|red-flags|fmcsa|vet|vet-preview|vetting|batch-vet|watchlist|monitoring|webhooks)(?:\/|$)/;
const CARE_PATH = /^\/api\/care(?:\/|$)/;

/** The metering class of an /api pathname: SEC data counts against the tier, FMCSA and care against the lookup guard. */
export function meterClassOf(pathname: string): MeterClass {
  return dataSourceOf(pathname) === 'sec' ? 'registry' : 'lookup';
}

/** The data source of an /api pathname (see DataSource). */
export function dataSourceOf(pathname: string): DataSource {
  return FMCSA_PATH.test(pathname) ? 'fmcsa' : CARE_PATH.test(pathname) ? 'care' : 'sec';
}

/**
 * The provenance members of `usage_meta` per data source. `trust_status` and
 * `commercial_use_notice` state the rule every response carries: Proofline
 * serves copies of a regulator's public data, so a client confirms a record
 * at the primary source before relying on it commercially: the accession
 * number on the SEC's own site (EDGAR), the carrier's USDOT record on FMCSA's
 * SAFER system.
 */
const PROVENANCE: Record<DataSource, { source: string; license: string; trust_status: string; commercial_use_notice: string }> = {
  sec: {
    source: 'Proofline registry: derived from SEC EDGAR public filings (data.sec.gov, www.sec.gov)',
    license: 'SEC EDGAR data is a U.S. government work (public domain); Proofline compilation, origin leaves and receipts: CC BY 4.0',
    trust_status:
      'unverified_copy: confirm the accession number on the SEC site (https://www.sec.gov/edgar/search/) before relying on this data; check origin leaves at /api/verify/{leaf_hash}',
    commercial_use_notice:
      'Commercial use requires validating each figure against the primary filing on sec.gov; Proofline receipts prove what was served, not that the filing is correct.',
  },
  fmcsa: {
    source: 'Proofline carrier data: derived from FMCSA public data (Company Census, crash, inspection, SMS and L&I files; QCMobile)',
    license:
      'FMCSA data is a U.S. government work (public domain); Proofline compilation, risk scores, vetting records and receipts: CC BY 4.0',
    trust_status:
      "unverified_copy: confirm the USDOT number, operating status and authority on FMCSA's SAFER system (https://safer.fmcsa.dot.gov/) before relying on this data; check origin leaves at /api/verify/{leaf_hash}",
    commercial_use_notice:
      "Commercial use requires checking operating authority and insurance against FMCSA's own records at dispatch; Proofline vetting records prove what was assessed and when, not that a carrier is safe.",
  },
  care: {
    source:
      "Proofline proof-of-care records: custody events appended by the shipment's parties, hash-chained; carriers from FMCSA public data",
    license: 'Records of the parties who appended them; Proofline chain hashes and receipts: CC BY 4.0',
    trust_status:
      "self_reported: each event is what a party recorded; recompute the chain at /api/care/{id}/verify (or offline from /api/care/{id}.json) and confirm the carrier on FMCSA's SAFER system (https://safer.fmcsa.dot.gov/)",
    commercial_use_notice:
      'A custody chain proves the order and integrity of the recorded events, not that they are true; the parties remain responsible for what they recorded.',
  },
};

/** The `usage_meta` block of a response serving `dataSource`'s data (default: the SEC registry). */
export function buildUsageMeta(id: ClientIdentity, m: Metered, baseUrl: string, proHourlyLimit: number, dataSource: DataSource = 'sec') {
  const p = PROVENANCE[dataSource];
  return {
    source: p.source,
    current_tier: id.tier,
    requests_this_hour: m.requests_this_hour,
    hourly_limit: m.hourly_limit,
    remaining: m.remaining,
    agent_type: id.agent_type,
    validation_required_for_commercial_use: true,
    // Spec 000: `license` and `pricing` are URLs; the license text is `license_notice`, beside them.
    license: `${baseUrl}/docs/rules#license`,
    license_notice: p.license,
    pricing: `${baseUrl}/docs/rules#pricing`,
    trust_status: p.trust_status,
    commercial_use_notice: p.commercial_use_notice,
    // Spec 000: a string on every tier (a Pro client is told what its key already gives).
    upsell:
      id.tier === 'free'
        ? `Pro API keys raise the limit from ${id.hourly_limit} to ${proHourlyLimit} requests per hour: ${baseUrl}/docs/rules#pricing`
        : `Pro key: ${id.hourly_limit} requests per hour; a higher limit per key on request: ${baseUrl}/docs/rules#pricing`,
    tier_recommendation: tierRecommendation(id, m),
  };
}

interface MetaTemplate {
  /** `{"source":…,"current_tier":…` */
  head: string;
  /** `"agent_type":…,…,"upsell":…` (the members between `remaining` and `tier_recommendation`). */
  mid: string;
}
const metaTemplates = new Map<string, MetaTemplate>();

function metaTemplate(id: ClientIdentity, baseUrl: string, proHourlyLimit: number, dataSource: DataSource): MetaTemplate {
  const key = `${id.tier}|${id.agent_type}|${id.hourly_limit}|${proHourlyLimit}|${dataSource}|${baseUrl}`;
  let t = metaTemplates.get(key);
  if (!t) {
    const zero: Metered = { requests_this_hour: 0, hourly_limit: id.hourly_limit, remaining: 0, reset_seconds: 0, over_limit: false };
    const {
      source,
      current_tier,
      requests_this_hour: _r,
      hourly_limit: _h,
      remaining: _m,
      tier_recommendation: _t,
      ...rest
    } = buildUsageMeta(id, zero, baseUrl, proHourlyLimit, dataSource);
    t = { head: JSON.stringify({ source, current_tier }).slice(0, -1), mid: JSON.stringify(rest).slice(1, -1) };
    if (metaTemplates.size > 1000) metaTemplates.clear();
    metaTemplates.set(key, t);
  }
  return t;
}

/** `tier_recommendation`: Pro for Pro clients, and for free clients at 80 % of their limit or over it. */
export function tierRecommendation(id: ClientIdentity, m: Metered): Tier {
  if (id.tier === 'pro') return 'pro';
  return m.requests_this_hour >= m.hourly_limit * 0.8 || m.over_limit ? 'pro' : 'free';
}

/**
 * The JSON text of `buildUsageMeta(id, m, baseUrl, proHourlyLimit, dataSource)`, byte for
 * byte (pinned by test/api/hot-path.test.ts), assembled from memoised pieces:
 * only the counters and the recommendation change from one request to the
 * next, so the long constant strings are serialised once per (tier, agent
 * type, limit, data source, base URL) instead of on every request.
 */
export function usageMetaJson(
  id: ClientIdentity,
  m: Metered,
  baseUrl: string,
  proHourlyLimit: number,
  dataSource: DataSource = 'sec',
): string {
  const t = metaTemplate(id, baseUrl, proHourlyLimit, dataSource);
  return `${t.head},"requests_this_hour":${m.requests_this_hour},"hourly_limit":${m.hourly_limit},"remaining":${m.remaining},${t.mid},"tier_recommendation":"${tierRecommendation(id, m)}"}`;
}

/**
 * `usageMetaJson` as UTF-8 parts around its two per-request numbers:
 * `open` + requests_this_hour + `mid` + remaining + `tail[recommendation]`,
 * for one identity (the hourly limit is the identity's) and the SEC registry
 * (the data of every hot-cached route). `chars` are the UTF-16 lengths of the
 * parts without the numbers, per recommendation.
 */
export interface UsageMetaParts {
  baseUrl: string;
  proHourlyLimit: number;
  open: Buffer;
  mid: Buffer;
  tail: Record<Tier, Buffer>;
  chars: Record<Tier, number>;
}

export function usageMetaParts(id: ClientIdentity, baseUrl: string, proHourlyLimit: number): UsageMetaParts {
  const t = metaTemplate(id, baseUrl, proHourlyLimit, 'sec');
  const open = `${t.head},"requests_this_hour":`;
  const mid = `,"hourly_limit":${id.hourly_limit},"remaining":`;
  const tail = (rec: Tier) => `,${t.mid},"tier_recommendation":"${rec}"}`;
  return {
    baseUrl,
    proHourlyLimit,
    open: Buffer.from(open),
    mid: Buffer.from(mid),
    tail: { pro: Buffer.from(tail('pro')), free: Buffer.from(tail('free')) },
    chars: { pro: open.length + mid.length + tail('pro').length, free: open.length + mid.length + tail('free').length },
  };
}
