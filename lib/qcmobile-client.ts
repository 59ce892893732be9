/**
 * Live client of the FMCSA QCMobile API (mobile.fmcsa.dot.gov/qc/services),
 * built on lib/http-client.ts (timeout, retries with backoff and jitter,
 * declared User-Agent). Used to refresh one carrier at vetting time; the bulk
 * files remain the nightly source.
 *
 * QCMobile quirks handled here (shared/notes/fmcsa.md):
 * - every body is an envelope `{content, retrievalDate, _links}`;
 * - `content: null` means the DOT was never issued → `data: null` (callers say "not found");
 * - an invalid key answers `content: "Webkey not found"` → terminal SourceUnavailableError;
 * - maintenance windows answer HTTP 200 with an HTML "FMCSA System Maintenance
 *   Page" → treated as a 503 (transient, retried, then SourceUnavailableError);
 * - the webKey is added to the URL at the last moment, so it never appears in
 *   error messages, logs or the `url` returned with the data.
 */
import { HttpClient, type RateLimiter } from './http-client.ts';
import { InvalidInputError, SourceUnavailableError } from './errors.ts';

export interface QcMobileConfig {
  /** FMCSA_BASE_URL, e.g. https://mobile.fmcsa.dot.gov/qc/services */
  baseUrl: string;
  /** FMCSA_WEBKEY */
  webKey: string;
  /** FMCSA_TIMEOUT_MS (default 5000) */
  timeoutMs?: number;
  userAgent: string;
  attempts?: number;
  backoffMs?: number;
  limiter?: RateLimiter;
  fetch?: typeof fetch;
}

/** One QCMobile answer with what a vetting record needs to cite it. */
export interface QcResult<T> {
  data: T;
  /** `retrievalDate` of the envelope (FMCSA's own time stamp). */
  retrieval_date: string | null;
  /** Request URL without the webKey. */
  url: string;
  retrieved_at: string;
  content_sha256: string;
}

/** `/carriers/{dot}` carrier object (camelCase as FMCSA sends it; money in thousands). */
export interface QcCarrier {
  dotNumber: number;
  legalName: string | null;
  dbaName: string | null;
  allowedToOperate: string | null;
  statusCode: string | null;
  commonAuthorityStatus: string | null;
  contractAuthorityStatus: string | null;
  brokerAuthorityStatus: string | null;
  bipdInsuranceOnFile: string | null;
  bipdInsuranceRequired: string | null;
  bipdRequiredAmount: string | null;
  safetyRating: string | null;
  safetyRatingDate: string | null;
  totalPowerUnits: number | null;
  totalDrivers: number | null;
  crashTotal: number | null;
  fatalCrash: number | null;
  injCrash: number | null;
  towawayCrash: number | null;
  driverInsp: number | null;
  driverOosInsp: number | null;
  driverOosRate: number | null;
  driverOosRateNationalAverage: string | null;
  vehicleInsp: number | null;
  vehicleOosInsp: number | null;
  vehicleOosRate: number | null;
  vehicleOosRateNationalAverage: string | null;
  hazmatInsp: number | null;
  hazmatOosInsp: number | null;
  hazmatOosRate: number | null;
  hazmatOosRateNationalAverage: string | null;
  oosDate: string | null;
  mcs150Outdated: string | null;
  phyStreet: string | null;
  phyCity: string | null;
  phyState: string | null;
  phyZipcode: string | null;
  ein: number | null;
  [k: string]: unknown;
}

export interface QcBasic {
  basicsId: number | null;
  basicsShortDesc: string | null;
  /** Parsed from `"57%"`; null when not published. */
  percentile: number | null;
  threshold: number | null;
  exceeded: boolean | null;
  measure: number | null;
  totalViolation: number | null;
  totalInspectionWithViolation: number | null;
  runDate: string | null;
}

export interface QcOos {
  id: number | null;
  dotNumber: number | null;
  oosDate: string | null;
  oosReason: string | null;
  oosReasonDescription: string | null;
}

export interface QcAuthority {
  dotNumber: number | null;
  docketNumber: number | null;
  prefix: string | null;
  commonAuthorityStatus: string | null;
  contractAuthorityStatus: string | null;
  brokerAuthorityStatus: string | null;
  authorizedForProperty: string | null;
  authorizedForPassenger: string | null;
  authorizedForHouseholdGoods: string | null;
  authorizedForBroker: string | null;
}

export interface QcDocket {
  dotNumber: number | null;
  docketNumber: number | null;
  prefix: string | null;
  docketNumberId: number | null;
}

interface Envelope {
  content: unknown;
  retrievalDate?: string | null;
}

const MAINTENANCE = /FMCSA System Maintenance/i;

/** Parses an envelope body; throws SourceUnavailableError for HTML and webKey errors. */
export function parseEnvelope(body: string, url: string): Envelope {
  const t = body.trimStart();
  if (t.startsWith('<')) {
    throw new SourceUnavailableError(
      MAINTENANCE.test(t) ? `QCMobile is in a maintenance window (${url})` : `QCMobile answered HTML instead of JSON (${url})`,
      { url },
    );
  }
  let env: Envelope;
  try {
    env = JSON.parse(t) as Envelope;
  } catch (e) {
    throw new SourceUnavailableError(`QCMobile answered invalid JSON (${url})`, { url, terminal: true }, { cause: e });
  }
  if (typeof env.content === 'string') {
    // e.g. {"content":"Webkey not found"}: a configuration problem, retrying will not help.
    throw new SourceUnavailableError(`QCMobile refused the request: ${env.content}`, {
      url,
      terminal: true,
      qcmobile_message: env.content,
    });
  }
  return env;
}

const num = (v: unknown): number | null =>
  v == null || v === '' ? null : Number.isFinite(Number(String(v).replace('%', ''))) ? Number(String(v).replace('%', '')) : null;
const str = (v: unknown): string | null => (v == null ? null : String(v));

function asArray(content: unknown): Record<string, unknown>[] {
  if (content == null) return [];
  return (Array.isArray(content) ? content : [content]) as Record<string, unknown>[];
}

/** `/carriers/{dot}` body → carrier, or null for `content: null`. */
export function parseCarrierBody(env: Envelope): QcCarrier | null {
  const c = env.content as { carrier?: QcCarrier } | null;
  return c?.carrier ?? null;
}

export function parseBasicsBody(env: Envelope): QcBasic[] {
  return asArray(env.content).map((x) => {
    // biome-ignore lint/suspicious/noExplicitAny: untyped JSON of the source; every field read is coerced (String(), Number()) where it is used
    const b = (x.basic ?? {}) as Record<string, any>;
    return {
      basicsId: num(b.basicsType?.basicsId ?? b.id?.basicsId),
      basicsShortDesc: str(b.basicsType?.basicsShortDesc),
      percentile: num(b.basicsPercentile),
      threshold: num(b.basicsViolationThreshold),
      exceeded: b.exceededFMCSAInterventionThreshold == null ? null : b.exceededFMCSAInterventionThreshold === 'Y',
      measure: num(b.measureValue),
      totalViolation: num(b.totalViolation),
      totalInspectionWithViolation: num(b.totalInspectionWithViolation),
      runDate: str(b.basicsRunDate),
    };
  });
}

export function parseOosBody(env: Envelope): QcOos[] {
  return asArray(env.content).map((x) => {
    const o = (x.oos ?? {}) as Record<string, unknown>;
    return {
      id: num(o.id),
      dotNumber: num(o.dotNumber),
      oosDate: str(o.oosDate),
      oosReason: str(o.oosReason),
      oosReasonDescription: str(o.oosReasonDescription),
    };
  });
}

export function parseAuthorityBody(env: Envelope): QcAuthority[] {
  return asArray(env.content).map((x) => {
    const a = (x.carrierAuthority ?? {}) as Record<string, unknown>;
    return {
      dotNumber: num(a.dotNumber),
      docketNumber: num(a.docketNumber),
      prefix: str(a.prefix),
      commonAuthorityStatus: str(a.commonAuthorityStatus),
      contractAuthorityStatus: str(a.contractAuthorityStatus),
      brokerAuthorityStatus: str(a.brokerAuthorityStatus),
      authorizedForProperty: str(a.authorizedForProperty),
      authorizedForPassenger: str(a.authorizedForPassenger),
      authorizedForHouseholdGoods: str(a.authorizedForHouseholdGoods),
      authorizedForBroker: str(a.authorizedForBroker),
    };
  });
}

export function parseDocketsBody(env: Envelope): QcDocket[] {
  return asArray(env.content).map((d) => ({
    dotNumber: num(d.dotNumber),
    docketNumber: num(d.docketNumber),
    prefix: str(d.prefix),
    docketNumberId: num(d.docketNumberId),
  }));
}

export function parseNameSearchBody(env: Envelope): QcCarrier[] {
  return asArray(env.content)
    .map((x) => x.carrier as QcCarrier)
    .filter(Boolean);
}

export interface QcMobileClient {
  getCarrier(dot: number | string, signal?: AbortSignal): Promise<QcResult<QcCarrier | null>>;
  getBasics(dot: number | string, signal?: AbortSignal): Promise<QcResult<QcBasic[]>>;
  getOos(dot: number | string, signal?: AbortSignal): Promise<QcResult<QcOos[]>>;
  getAuthority(dot: number | string, signal?: AbortSignal): Promise<QcResult<QcAuthority[]>>;
  getDocketNumbers(dot: number | string, signal?: AbortSignal): Promise<QcResult<QcDocket[]>>;
  searchByName(name: string, opts?: { start?: number; size?: number; signal?: AbortSignal }): Promise<QcResult<QcCarrier[]>>;
}

function dotPath(dot: number | string): string {
  const s = String(dot).trim();
  if (!/^\d{1,8}$/.test(s) || Number(s) === 0)
    throw new InvalidInputError(`'dot' must be a USDOT number, got '${s}'`, { response: { parameter: 'dot' } });
  return String(Number(s));
}

/**
 * Creates a QCMobile client. Requires `webKey` (FMCSA_WEBKEY); throws
 * InvalidInputError without one so a missing key is reported at startup.
 */
export function createQcMobileClient(config: QcMobileConfig): QcMobileClient {
  if (!config.webKey?.trim())
    throw new InvalidInputError('FMCSA_WEBKEY is required for the QCMobile client', { response: { parameter: 'FMCSA_WEBKEY' } });
  const baseFetch = config.fetch ?? fetch;
  // The key is appended here so HttpClient (and its errors and logs) never see it;
  // a 200 HTML maintenance page becomes a 503 so HttpClient retries it as transient.
  const keyedFetch: typeof fetch = async (input, init) => {
    const u = new URL(String(input));
    u.searchParams.set('webKey', config.webKey);
    const res = await baseFetch(u, init);
    const ct = res.headers.get('content-type') ?? '';
    if (res.ok && ct.includes('text/html')) {
      const text = await res.text();
      return new Response(text, { status: MAINTENANCE.test(text) ? 503 : 502, headers: res.headers });
    }
    return res;
  };
  const http = new HttpClient({
    baseUrl: config.baseUrl,
    userAgent: config.userAgent,
    timeoutMs: config.timeoutMs ?? 5000,
    attempts: config.attempts ?? 3,
    backoffMs: config.backoffMs ?? 300,
    limiter: config.limiter,
    headers: { accept: 'application/json' },
    fetch: keyedFetch,
  });
  async function call<T>(p: string, parse: (env: Envelope) => T, signal?: AbortSignal): Promise<QcResult<T>> {
    const res = await http.get(p, { signal });
    const url = http.url(p);
    const env = parseEnvelope(res.text(), url);
    return { data: parse(env), retrieval_date: env.retrievalDate ?? null, url, retrieved_at: res.retrieved_at, content_sha256: res.sha256 };
  }
  return {
    getCarrier: (dot, signal) => call(`/carriers/${dotPath(dot)}`, parseCarrierBody, signal),
    getBasics: (dot, signal) => call(`/carriers/${dotPath(dot)}/basics`, parseBasicsBody, signal),
    getOos: (dot, signal) => call(`/carriers/${dotPath(dot)}/oos`, parseOosBody, signal),
    getAuthority: (dot, signal) => call(`/carriers/${dotPath(dot)}/authority`, parseAuthorityBody, signal),
    getDocketNumbers: (dot, signal) => call(`/carriers/${dotPath(dot)}/docket-numbers`, parseDocketsBody, signal),
    searchByName: (name, opts = {}) => {
      const n = name.trim();
      if (n.length < 2) throw new InvalidInputError(`'name' needs at least 2 characters`, { response: { parameter: 'name' } });
      const qs = new URLSearchParams({ start: String(opts.start ?? 0), size: String(opts.size ?? 50) });
      return call(`/carriers/name/${encodeURIComponent(n)}?${qs}`, parseNameSearchBody, opts.signal);
    },
  };
}
