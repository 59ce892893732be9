/**
 * Live refresh of a carrier from FMCSA QCMobile (`/carriers/{dot}?webKey=`)
 * at vetting time, when FMCSA_WEBKEY is configured. One attempt, bounded by
 * FMCSA_TIMEOUT_MS: a broker waiting on a vetting must not wait on retries;
 * any failure is recorded in the snapshot and the vetting falls back to the
 * warehouse. The webKey never appears in stored URLs or messages.
 *
 * QCMobile facts (fmcsa notes): envelope `{content, retrievalDate}`;
 * `content: null` = unknown DOT; maintenance answers an HTML page;
 * inspection and crash counts cover 24 months; BIPD amounts in thousands.
 */
import type { Config } from '../../lib/config.ts';
import { createQcMobileClient } from '../../lib/qcmobile-client.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { CircuitBreaker } from '../platform/deadline.ts';
import type { CarrierFeatures } from '../../ingest/fmcsa/risk-model.ts';
import type { LiveRefresher } from '../platform/deps.ts';

export type { LiveRefresher };

/** Removes the webKey from URLs and messages before they are stored or shown. */
export function redactWebKey(s: string): string {
  return s.replace(/webKey=[^&\s"]+/gi, 'webKey=REDACTED');
}

/**
 * A live refresher over the carriers family's QCMobile client (one attempt,
 * FMCSA_TIMEOUT_MS), or null when FMCSA_WEBKEY is not configured.
 */
export function createLiveRefresher(
  config: Pick<Config, 'FMCSA_WEBKEY' | 'FMCSA_BASE_URL' | 'FMCSA_TIMEOUT_MS' | 'HTTP_USER_AGENT'>,
  fetchImpl?: typeof fetch,
): LiveRefresher | null {
  const key = config.FMCSA_WEBKEY;
  if (!key) return null;
  const client = createQcMobileClient({
    baseUrl: config.FMCSA_BASE_URL ?? 'https://mobile.fmcsa.dot.gov/qc/services',
    webKey: key,
    timeoutMs: config.FMCSA_TIMEOUT_MS,
    userAgent: config.HTTP_USER_AGENT,
    attempts: 1,
    fetch: fetchImpl,
  });
  // Deadline + circuit breaker (issue 25): after 3 straight failures QCMobile is not called for 30 s, so a
  // hung FMCSA costs vettings nothing (they fall back to the warehouse snapshot and say so in live_refresh).
  const breaker = new CircuitBreaker('qcmobile', {
    timeoutMs: config.FMCSA_TIMEOUT_MS + 500,
    failuresToOpen: 3,
    openMs: 30_000,
    isAnswer: (e) => e instanceof NotFoundError,
  });
  return {
    breaker,
    async fetchCarrier(dot) {
      const r = await breaker.run(() => client.getCarrier(dot));
      if (!r.data) throw new Error(`QCMobile has no carrier for DOT ${dot}`);
      return {
        carrier: r.data as unknown as Record<string, unknown>,
        source_url: redactWebKey(r.url),
        as_of: r.retrieval_date,
        retrieved_at: r.retrieved_at,
        content_sha256: r.content_sha256,
      };
    },
  };
}

const num = (v: unknown): number | null => {
  if (v === null || v === undefined || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

/**
 * Overlays the live QCMobile values on the warehouse features (the live
 * values are newer). Only fields QCMobile states are replaced; rates are
 * recomputed the way the risk model defines them (null under 3 inspections).
 */
export function overlayLiveCarrier(f: CarrierFeatures, c: Record<string, unknown>, minInspections: number): CarrierFeatures {
  const out: CarrierFeatures = { ...f };
  if (typeof c.legalName === 'string') out.legal_name = c.legalName;
  if (typeof c.phyState === 'string') out.phy_state = c.phyState;
  if (typeof c.statusCode === 'string') out.status_code = c.statusCode;
  if (typeof c.safetyRating === 'string' || c.safetyRating === null)
    out.safety_rating = (c.safetyRating as string | null) ?? f.safety_rating;
  const auth = [c.commonAuthorityStatus, c.contractAuthorityStatus, c.brokerAuthorityStatus].filter(
    (s): s is string => typeof s === 'string',
  );
  if (auth.length) out.authority_status = auth.includes('A') ? 'ACTIVE' : auth.includes('I') ? 'INACTIVE' : 'NONE';
  const pairs: Array<[keyof CarrierFeatures, unknown]> = [
    ['power_units', c.totalPowerUnits],
    ['drivers', c.totalDrivers],
    ['driver_inspections_24m', c.driverInsp],
    ['driver_oos_24m', c.driverOosInsp],
    ['vehicle_inspections_24m', c.vehicleInsp],
    ['vehicle_oos_24m', c.vehicleOosInsp],
    ['hazmat_inspections_24m', c.hazmatInsp],
    ['hazmat_oos_24m', c.hazmatOosInsp],
    ['crashes_24m', c.crashTotal],
    ['fatal_crashes_24m', c.fatalCrash],
    ['injury_crashes_24m', c.injCrash],
    ['towaway_crashes_24m', c.towawayCrash],
    ['bipd_on_file_k', c.bipdInsuranceOnFile],
    ['bipd_required_k', c.bipdRequiredAmount],
  ];
  for (const [k, v] of pairs) {
    const n = num(v);
    if (n !== null) (out as unknown as Record<string, unknown>)[k] = n;
  }
  const rate = (insp: number, oos: number) => (insp >= minInspections ? Math.round((oos / insp) * 10000) / 100 : null);
  out.inspections_24m = Math.max(out.inspections_24m, out.driver_inspections_24m, out.vehicle_inspections_24m);
  out.driver_oos_rate = rate(out.driver_inspections_24m, out.driver_oos_24m);
  out.vehicle_oos_rate = rate(out.vehicle_inspections_24m, out.vehicle_oos_24m);
  out.hazmat_oos_rate = rate(out.hazmat_inspections_24m, out.hazmat_oos_24m);
  out.crashes_per_power_unit = out.power_units
    ? Math.round((out.crashes_24m / out.power_units) * 10000) / 10000
    : out.crashes_per_power_unit;
  return out;
}
