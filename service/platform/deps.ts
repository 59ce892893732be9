/**
 * What the service is built from. `createApp(deps)` never reads the
 * environment and never listens: `main.ts` builds these from config, tests
 * build them from a temporary data directory.
 */
import { SourceUnavailableError } from '../../lib/errors.ts';
import type { HotAnswerer } from './response-finish.ts';
import type { Logger } from '../../lib/log.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import type { StateStore } from './state.store.ts';
import type { SigningKey } from '../../lib/keys.ts';
import type { ResponseCache } from './response-cache.ts';
import type { UsageService } from './usage.service.ts';
import type { BreakerReport } from './deadline.ts';

// Ports the composition root fills with family implementations (service/vetting/live-refresh.ts,
// service/admin/queue-dashboard.ts): declared here so the platform never imports a family.

/** A carrier as QCMobile answered at vetting time (service/vetting/live-refresh.ts). */
export interface LiveCarrier {
  /** QCMobile `content.carrier` as received. */
  carrier: Record<string, unknown>;
  source_url: string;
  /** QCMobile `retrievalDate` (their as-of). */
  as_of: string | null;
  retrieved_at: string;
  content_sha256: string;
}

/** Live FMCSA refresh of one carrier. */
export interface LiveRefresher {
  fetchCarrier(dot: number): Promise<LiveCarrier>;
  /** Its deadline and circuit breaker (service/platform/deadline.ts), reported by /api/health. */
  breaker?: { report(): BreakerReport };
}

/** The Bull Board queue dashboard (service/admin/queue-dashboard.ts). */
export interface QueueDashboard {
  /** The admin token requests must carry (Bearer header, cookie, or `?token=` once). */
  token: string;
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The monitoring jobs (jobs/monitoring/: BullMQ with REDIS_URL, in process
 * without), filled by the composition root. Absent: deliveries stay pending in
 * the state store until a runner starts (it re-enqueues every pending delivery).
 */
export interface MonitoringJobs {
  /** Enqueues one webhook delivery; `key` distinguishes a manual redelivery's job from the first one. */
  enqueueDelivery(deliveryId: string, key?: string): Promise<void>;
}

/** One read-only snapshot reader per warehouse domain (registry, quotes, transcripts, fmcsa). */
export type Readers = Record<string, SnapshotReader>;

export interface ServiceOptions {
  /** Public base URL for links in responses and manifests (no trailing slash). */
  publicBaseUrl: string;
  /** Hours after which a published snapshot counts as stale in /api/health. */
  snapshotStaleHours: number;
  version: string;
  dataDir: string;
  /**
   * Webhook receiver origins exempt from the private-address guard (e.g. `http://127.0.0.1:4567`): for tests and
   * local development only, set in code, never from the environment (docs/monitoring.md).
   */
  webhookPrivateOrigins?: string[];
  /** Browser origins allowed on /mcp (MCP_ALLOWED_ORIGINS); requests without Origin are always allowed. */
  mcpAllowedOrigins?: string[];
  /** ADMIN_TOKEN: bearer token of admin endpoints (POST /admin/credits); unset disables them. */
  adminToken?: string;
  /** Identity published in /.well-known/ai (ORG_*); absent fields fall back to Proofline defaults and the base URL's host. */
  org?: { name?: string; domain?: string; mission?: string; sectors?: string[] };
  /** secp256k1 key file for tier-3 discovery signatures (DISCOVERY_SECP256K1_KEY_PATH); unset = tier 2 only. */
  discoveryKeyPath?: string;
}

export interface ServiceDeps {
  readers: Readers;
  log: Logger;
  options: ServiceOptions;
  /** Injected clock (tests pin time). */
  now: () => Date;
  startedAt: Date;
  /** Optional liveness probes of configured dependencies (Redis), for /api/health. */
  probes?: Record<string, () => Promise<boolean>>;
  /** Ed25519 key signing receipts (service/receipts); loaded lazily from DATA_DIR/keys when absent. */
  signingKey?: SigningKey;
  /** Metering, limits and query log (service/usage); created lazily (in memory) when absent. */
  usage?: UsageService;
  /** The /api layer (metering, hot cache); set by createApp, used by main.ts for the node:http hot path. */
  apiLayer?: HotAnswerer;
  /** Hot-response cache (service/cache); created by createApp when absent. */
  responseCache?: ResponseCache;
  /** Server-owned durable store (vetting records, credits, custody chains) under DATA_DIR/state/. */
  state?: StateStore;
  /**
   * While another process on the same DATA_DIR owns the state store: who holds
   * it (`PID n (...)`), for the 503 of state-backed endpoints and /api/health
   * (service/platform/state.claim.ts). Null or absent when this process owns it.
   */
  stateHeldBy?: () => string | null;
  /** Live FMCSA QCMobile refresh for vettings; null/absent when FMCSA_WEBKEY is unset. */
  liveRefresher?: LiveRefresher | null;
  /** Webhook delivery jobs (service/monitoring); absent until the composition root starts a runner. */
  monitoringJobs?: MonitoringJobs;
  /** Bull Board at /admin/queues (service/admin); built only when REDIS_URL and ADMIN_TOKEN are set. */
  queueDashboard?: QueueDashboard;
  /**
   * Work createApp started that should finish before the server takes traffic
   * (the search indexes of the served snapshot); main.ts awaits it before
   * listening. Never rejects (failures are logged).
   */
  warmups?: Array<Promise<unknown>>;
}

/** The reader of a domain, or a 503 when that domain is not configured in this deployment. */
export function readerFor(deps: ServiceDeps, domain: string): SnapshotReader {
  const r = deps.readers[domain];
  if (!r) throw new SourceUnavailableError(`domain ${domain} is not served by this instance`, { domain });
  return r;
}
