/**
 * Sample FMCSA bulk files in the real formats (headers from the FMCSA
 * dictionaries), joinable on DOT number (every file) and VIN (inspection
 * units ↔ crashes), deterministic in (scale, seed):
 *
 *   fmcsa/census/Company_Census_File.csv          147 cols, YYYYMMDD dates
 *   fmcsa/crash/Crash_File.csv                    59 cols, one row per vehicle
 *   fmcsa/inspection/Vehicle_Inspection_File.csv  63 cols
 *   fmcsa/inspection/Inspections_Per_Unit.csv     12 cols (VINs)
 *   fmcsa/inspection/Vehicle_Inspections_and_Violations.csv  12 cols
 *   fmcsa/sms/SMS_AB_PassProperty.zip|.txt        21 cols (measures, no percentiles)
 *   fmcsa/sms/SMS_AB_Pass.txt                     36 cols (passenger: percentiles, alerts)
 *   fmcsa/licensing/revocation.txt                L&I download: quoted, DOT padded to 8, MM/DD/YYYY
 *   fmcsa/licensing/Carrier_All_With_History.txt  L&I carrier/authority, money in thousands
 *   fmcsa/licensing/Insur_All_With_History.txt    L&I insurance
 *   fmcsa/oos/OUT_OF_SERVICE_ORDERS.csv           ISO dates
 *
 * Distributions follow shared/notes/fmcsa.md: about 20 % of carriers inspected
 * in 24 months, driver OOS about 5.7 %, vehicle OOS about 24 %, a small share
 * with Acute/Critical flags or passenger alerts, ~2 % with revocations, ~0.5 %
 * with OOS orders, and ~0.3 % chameleons re-registering a revoked carrier's
 * phone, address and a vehicle. Big files are async generators of chunks.
 */
import { zipSync } from 'fflate';
import { Rng, SAMPLE_TODAY, type SampleFile, type SampleGenerator, type SampleOptions, type SampleScale } from '../sample/sample-kit.ts';
import {
  AUTHORITY_HEADER,
  COMPANY_CENSUS_HEADER,
  CRASH_HEADER,
  INSPECTION_HEADER,
  INSPECTION_UNITS_HEADER,
  INSURANCE_HEADER,
  OOS_ORDERS_HEADER,
  REVOCATION_HEADER,
  SMS_PASSENGER_HEADER,
  SMS_PROPERTY_HEADER,
  VIOLATIONS_HEADER,
} from './fmcsa-headers.ts';

/** Carriers per scale: full = the Company Census File's 4,437,486 records. */
export const FMCSA_CARRIERS: Record<SampleScale, number> = { small: 20_000, medium: 300_000, full: 4_437_486 };
/** First sample DOT number (real DOTs run from 1 to ~4.5 M; the sample uses a dense range). */
export const SAMPLE_DOT_BASE = 1_000_000;

const TODAY_MS = Date.parse(`${SAMPLE_TODAY}T00:00:00Z`);
const DAY = 86_400_000;
const STATES = ['TX', 'CA', 'FL', 'IL', 'GA', 'OH', 'PA', 'NY', 'NC', 'MI', 'IN', 'TN', 'WA', 'AZ', 'MO', 'NJ', 'WI', 'MN', 'AL', 'KY'];
const CITIES = ['SPRINGFIELD', 'FRANKLIN', 'GREENVILLE', 'CLINTON', 'MADISON', 'GEORGETOWN', 'SALEM', 'FAIRVIEW', 'RIVERSIDE', 'ARLINGTON'];
const WORDS = [
  'EAGLE',
  'PRAIRIE',
  'SUMMIT',
  'RED ROCK',
  'BLUE LINE',
  'IRON',
  'LONE STAR',
  'GOLDEN',
  'NORTHERN',
  'COASTAL',
  'ALLIED',
  'SWIFT',
  'LIBERTY',
  'PIONEER',
  'CANYON',
];
const SUFFIX = ['TRUCKING LLC', 'TRANSPORT INC', 'LOGISTICS LLC', 'FREIGHT INC', 'EXPRESS LLC', 'HAULING CO', 'CARRIERS INC'];
const MAKES = ['FRHT', 'INTL', 'KW', 'PTRB', 'VOLV', 'MACK', 'WSTR'];
const STREETS = ['MAIN ST', 'OAK AVE', 'INDUSTRIAL BLVD', 'HWY 59', 'COMMERCE DR', 'FM 746', 'ELM ST', 'PARK RD'];

/** YYYYMMDD of a day offset from the sample's today (negative = past). */
function ymd(daysAgo: number): string {
  return new Date(TODAY_MS - daysAgo * DAY).toISOString().slice(0, 10).replace(/-/g, '');
}
function mdy(daysAgo: number): string {
  const s = ymd(daysAgo);
  return `${s.slice(4, 6)}/${s.slice(6, 8)}/${s.slice(0, 4)}`;
}
function iso(daysAgo: number): string {
  const s = ymd(daysAgo);
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`;
}
function hash32(a: number, b: number): number {
  let h = Math.imul(a ^ 0x85ebca6b, 0xc2b2ae35) ^ Math.imul(b + 0x27d4eb2f, 0x165667b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}
function poisson(rng: Rng, lambda: number): number {
  if (lambda <= 0) return 0;
  if (lambda > 30) return Math.max(0, Math.round(rng.normal(lambda, Math.sqrt(lambda))));
  const l = Math.exp(-lambda);
  let k = 0;
  let p = 1;
  do {
    k++;
    p *= rng.next();
  } while (p > l);
  return k - 1;
}
/** CSV field: quoted when it contains a comma or quote. */
function q(v: string | number | null | undefined): string {
  if (v == null) return '';
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One sample carrier (everything every file needs, recomputed per file from (seed, index)). */
export interface SampleCarrier {
  idx: number;
  dot: number;
  name: string;
  state: string;
  city: string;
  street: string;
  zip: string;
  phone: string;
  email: string | null;
  operation: 'A' | 'B' | 'C';
  hm: boolean;
  passenger: boolean;
  status: 'A' | 'I';
  powerUnits: number;
  drivers: number;
  addDaysAgo: number;
  mcsDaysAgo: number;
  docket: number | null;
  rating: 'S' | 'C' | 'U' | null;
  /** Day offsets (ago) of revocation orders; involuntary flags alongside. */
  revocations: Array<{ daysAgo: number; involuntary: boolean }>;
  oosOrder: { daysAgo: number; active: boolean } | null;
  /** Index of the revoked carrier whose phone, address and one VIN this one reuses. */
  chameleonOf: number | null;
  /** Per-carrier safety multiplier: OOS and crash propensity (1 = average). */
  risk: number;
  bipdOnFileK: number;
  bipdRequiredK: number;
}

function phoneFor(idx: number): string {
  const n = 2_000_000_000 + ((idx * 7_919) % 7_000_000_000);
  const s = String(n);
  return `(${s.slice(0, 3)}) ${s.slice(3, 6)}-${s.slice(6, 10)}`;
}
function addressFor(rng: Rng, idx: number): { street: string; zip: string } {
  return { street: `${100 + (idx % 9_800)} ${rng.pick(STREETS)}`, zip: String(10_000 + (idx % 89_999)).padStart(5, '0') };
}
/** VIN of vehicle `unit` of carrier `idx`: 17 characters, unique per (idx, unit). */
export function vinFor(idx: number, unit: number): string {
  const body = (idx * 4_099 + unit).toString(36).toUpperCase().padStart(8, '0');
  return `1FU${'JGLDR'.charAt(unit % 5)}X${body}${String(unit % 1000).padStart(3, '0')}`.slice(0, 17).padEnd(17, '0');
}

function baseCarrier(seed: number, idx: number): SampleCarrier {
  const rng = new Rng(hash32(seed, idx));
  const r = rng.next();
  const powerUnits = r < 0.5 ? 1 : r < 0.8 ? rng.int(2, 5) : r < 0.95 ? rng.int(6, 20) : r < 0.995 ? rng.int(21, 200) : rng.int(201, 2000);
  const operation = rng.weighted([
    ['A', 60],
    ['C', 35],
    ['B', 5],
  ] as const);
  const hm = operation === 'B' || rng.bool(0.04);
  const passenger = !hm && rng.bool(0.03);
  const addDaysAgo = rng.bool(0.05) ? rng.int(5, 89) : rng.int(90, 365 * 40);
  const mcsDaysAgo = Math.min(addDaysAgo, rng.bool(0.3) ? rng.int(731, 3000) : rng.int(0, 730));
  const forHire = operation === 'A' && rng.bool(0.75);
  const revocations: SampleCarrier['revocations'] = [];
  if (forHire && rng.bool(0.03)) {
    const n = rng.weighted([
      [1, 70],
      [2, 20],
      [3, 7],
      [5, 3],
    ] as const);
    for (let k = 0; k < n; k++) revocations.push({ daysAgo: rng.int(10, 1800), involuntary: rng.bool(0.85) });
  }
  const oosOrder = rng.bool(0.005) ? { daysAgo: rng.int(5, 2000), active: rng.bool(0.6) } : null;
  const rating = rng.bool(0.9)
    ? null
    : rng.weighted([
        ['S', 80],
        ['C', 15],
        ['U', 5],
      ] as const);
  const word = rng.pick(WORDS);
  const { street, zip } = addressFor(rng, idx);
  const name = `${word} ${rng.pick(SUFFIX).replace('LLC', idx % 3 === 0 ? 'LLC' : 'INC')}`.replace(/^/, `${idx % 97 === 0 ? 'J ' : ''}`);
  const bipdRequiredK = hm ? 5000 : passenger ? 5000 : 750;
  const recentInvol = revocations.some((x) => x.involuntary && x.daysAgo < 365);
  return {
    idx,
    dot: SAMPLE_DOT_BASE + idx,
    name: `${name} ${idx}`,
    state: rng.pick(STATES),
    city: rng.pick(CITIES),
    street,
    zip,
    phone: phoneFor(idx),
    email: rng.bool(0.7) ? `dispatch${idx}@${word.toLowerCase().replace(/ /g, '')}freight.com` : null,
    operation,
    hm,
    passenger,
    status: rng.bool(0.92) ? 'A' : 'I',
    powerUnits,
    drivers: powerUnits + rng.int(0, Math.ceil(powerUnits / 3)),
    addDaysAgo,
    mcsDaysAgo,
    docket: forHire ? 100_000 + idx : null,
    rating,
    revocations,
    oosOrder,
    chameleonOf: null,
    risk: rng.bool(0.05) ? 2 + rng.next() * 2 : 0.6 + rng.next() * 0.8,
    bipdOnFileK: recentInvol || rng.bool(0.02) ? 0 : rng.bool(0.8) ? 1000 : bipdRequiredK,
    bipdRequiredK,
  };
}

/** The carrier at index `idx`, with its chameleon link resolved (a revoked carrier a few indices back). */
export function sampleCarrier(seed: number, idx: number): SampleCarrier {
  const c = baseCarrier(seed, idx);
  const rng = new Rng(hash32(seed ^ 0x5bd1e995, idx));
  if (idx > 10 && rng.bool(0.12)) {
    const j = idx - rng.int(1, 10);
    const prev = baseCarrier(seed, j);
    if (prev.revocations.some((x) => x.involuntary)) {
      c.chameleonOf = j;
      c.phone = prev.phone;
      c.street = prev.street;
      c.zip = prev.zip;
      c.city = prev.city;
      c.state = prev.state;
      c.addDaysAgo = Math.min(c.addDaysAgo, rng.int(20, 400));
    }
  }
  return c;
}

export interface SampleInspection {
  id: number;
  daysAgo: number;
  level: number;
  driverOos: number;
  vehicleOos: number;
  hazmat: boolean;
  hazmatOos: number;
  driverViol: number;
  vehicleViol: number;
  units: number[];
}

/** Inspections of a carrier (about 20 % inspected in 24 months; driver OOS ~5.7 %, vehicle ~24 %). */
export function sampleInspections(seed: number, c: SampleCarrier): SampleInspection[] {
  const rng = new Rng(hash32(seed ^ 0x1b873593, c.idx));
  const n = poisson(rng, 0.075 * c.powerUnits * (c.status === 'I' ? 0.2 : 1) * 1.15);
  const out: SampleInspection[] = [];
  for (let k = 0; k < n; k++) {
    const level = rng.weighted([
      [1, 25],
      [2, 35],
      [3, 35],
      [5, 4],
      [6, 1],
    ] as const);
    const driverLevel = level !== 5;
    const vehicleLevel = level !== 3;
    const driverOos = driverLevel && rng.bool(Math.min(0.9, 0.057 * c.risk)) ? 1 : 0;
    const vehicleOos = vehicleLevel && rng.bool(Math.min(0.95, 0.235 * c.risk)) ? rng.int(1, 3) : 0;
    const hazmat = c.hm && vehicleLevel && rng.bool(0.5);
    const hazmatOos = hazmat && rng.bool(0.045 * c.risk) ? 1 : 0;
    const u0 = rng.int(0, c.powerUnits - 1);
    const units = [u0];
    if (vehicleLevel && rng.bool(0.6)) units.push(c.powerUnits + (u0 % Math.max(1, c.powerUnits)));
    // A chameleon runs one of its predecessor's vehicles.
    if (c.chameleonOf != null && k === 0) units[0] = -1;
    out.push({
      id: 500_000_000 + c.idx * 64 + k,
      // ~13 % of inspections are older than the 24-month window.
      daysAgo: rng.bool(0.13) ? rng.int(731, 1500) : rng.int(1, 729),
      level,
      driverOos,
      vehicleOos,
      hazmat,
      hazmatOos,
      driverViol: driverOos + (rng.bool(0.25) ? rng.int(1, 2) : 0),
      vehicleViol: vehicleOos + (vehicleLevel && rng.bool(0.4) ? rng.int(1, 3) : 0),
      units,
    });
  }
  return out;
}

function unitVin(c: SampleCarrier, unit: number): string {
  return unit === -1 && c.chameleonOf != null ? vinFor(c.chameleonOf, 0) : vinFor(c.idx, unit);
}

/** Crashes of a carrier: one entry per crash (the file has one row per vehicle). */
export function sampleCrashes(
  seed: number,
  c: SampleCarrier,
): Array<{ id: number; daysAgo: number; fatalities: number; injuries: number; towAway: boolean; vehicles: number[] }> {
  const rng = new Rng(hash32(seed ^ 0x68e31da4, c.idx));
  const n = poisson(rng, 0.0487 * c.powerUnits * c.risk);
  const out = [];
  for (let k = 0; k < n; k++) {
    const sev = rng.next();
    const fatalities = sev < 0.03 ? rng.int(1, 2) : 0;
    const injuries = sev < 0.35 ? rng.int(1, 3) : 0;
    out.push({
      id: 10_000_000 + c.idx * 32 + k,
      daysAgo: rng.int(1, 1800),
      fatalities,
      injuries,
      towAway: fatalities > 0 || injuries === 0 || rng.bool(0.5),
      vehicles: rng.bool(0.08) && c.powerUnits > 1 ? [0, 1] : [rng.int(0, c.powerUnits - 1)],
    });
  }
  return out;
}

/** Chunks of lines from a per-carrier row function, ~1 MB each. */
async function* chunked(
  header: string,
  count: number,
  seed: number,
  rows: (c: SampleCarrier, out: string[]) => void,
): AsyncGenerator<string> {
  let buf: string[] = [header];
  let size = 0;
  for (let i = 0; i < count; i++) {
    const before = buf.length;
    rows(sampleCarrier(seed, i), buf);
    for (let k = before; k < buf.length; k++) size += buf[k].length;
    if (size > 1 << 20) {
      yield buf.join('\n') + '\n';
      buf = [];
      size = 0;
    }
  }
  if (buf.length) yield buf.join('\n') + '\n';
}

const CENSUS_IDX = Object.fromEntries(COMPANY_CENSUS_HEADER.map((h, i) => [h, i])) as Record<string, number>;
function censusRow(c: SampleCarrier): string {
  const r: (string | number | null)[] = new Array(COMPANY_CENSUS_HEADER.length).fill('');
  const set = (k: string, v: string | number | null) => (r[CENSUS_IDX[k]] = v);
  // Some MCMIS extracts append ` 0000` to dates (schemas.md §1).
  set('MCS150_DATE', ymd(c.mcsDaysAgo) + (c.idx % 5 === 0 ? ' 0000' : ''));
  set('ADD_DATE', ymd(c.addDaysAgo));
  set('STATUS_CODE', c.status);
  set('DOT_NUMBER', c.dot);
  set('CARRIER_OPERATION', c.operation);
  set('MCS150_MILEAGE', c.powerUnits * 80_000);
  set('MCS150_MILEAGE_YEAR', 2025);
  set('PRIOR_REVOKE_FLAG', c.chameleonOf != null && c.idx % 2 === 0 ? 'Y' : 'N');
  set('PRIOR_REVOKE_DOT_NUMBER', c.chameleonOf != null && c.idx % 2 === 0 ? SAMPLE_DOT_BASE + c.chameleonOf : '');
  set('PHONE', c.phone);
  set('COMPANY_OFFICER_1', `OFFICER ${c.idx}`);
  set('TRUCK_UNITS', c.passenger ? 0 : c.powerUnits);
  set('POWER_UNITS', c.powerUnits);
  set('BUS_UNITS', c.passenger ? c.powerUnits : 0);
  set('TOTAL_DRIVERS', c.drivers);
  set('TOTAL_CDL', c.drivers);
  set('HM_Ind', c.hm ? 'Y' : 'N');
  set('LEGAL_NAME', c.name);
  set('PHY_STREET', c.street);
  set('PHY_CITY', c.city);
  set('PHY_COUNTRY', 'US');
  set('PHY_STATE', c.state);
  set('PHY_ZIP', c.zip);
  set('CARRIER_MAILING_STREET', c.street);
  set('CARRIER_MAILING_STATE', c.state);
  set('CARRIER_MAILING_CITY', c.city);
  set('CARRIER_MAILING_COUNTRY', 'US');
  set('CARRIER_MAILING_ZIP', c.zip);
  set('EMAIL_ADDRESS', c.email ? c.email.toUpperCase() : '');
  set('SAFETY_RATING', c.rating ?? '');
  set('SAFETY_RATING_DATE', c.rating ? ymd(Math.min(c.addDaysAgo, 400 + (c.idx % 3000))) : '');
  set('CRGO_GENFREIGHT', c.passenger ? '' : 'X');
  set('CRGO_PASSENGERS', c.passenger ? 'X' : '');
  set('CRGO_CHEM', c.hm ? 'X' : '');
  set('OWNTRACT', c.passenger ? 0 : c.powerUnits);
  if (c.docket) {
    set('DOCKET1PREFIX', 'MC');
    set('DOCKET1', c.docket);
    set('DOCKET1_STATUS_CODE', c.revocations.length ? 'I' : 'A');
  }
  return r.map(q).join(',');
}

const CRASH_IDX = Object.fromEntries(CRASH_HEADER.map((h, i) => [h, i])) as Record<string, number>;
function crashRows(seed: number, c: SampleCarrier, out: string[]): void {
  const idx = CRASH_IDX;
  for (const k of sampleCrashes(seed, c)) {
    k.vehicles.forEach((unit, seq) => {
      const r: (string | number)[] = new Array(CRASH_HEADER.length).fill('');
      r[idx.CHANGE_DATE] = ymd(Math.max(k.daysAgo - 3, 0));
      r[idx.CRASH_ID] = k.id;
      r[idx.REPORT_STATE] = c.state;
      r[idx.REPORT_NUMBER] = `${c.state}${String(k.id).padStart(10, '0')}`;
      r[idx.REPORT_DATE] = ymd(k.daysAgo);
      r[idx.REPORT_TIME] = String(600 + (k.id % 1200)).padStart(4, '0');
      r[idx.REPORT_SEQ_NO] = seq + 1;
      r[idx.DOT_NUMBER] = c.dot;
      r[idx.CI_STATUS_CODE] = k.id % 23 === 0 ? 'P' : 'C';
      r[idx.CITY] = c.city;
      r[idx.STATE] = c.state;
      r[idx.TRUCK_BUS_IND] = c.passenger ? 'B' : 'T';
      r[idx.GVW_RATING_ID] = 3;
      r[idx.VEHICLE_IDENTIFICATION_NUMBER] = vinFor(c.idx, unit);
      r[idx.VEHICLE_LIC_STATE] = c.state;
      r[idx.HAZMAT_RELEASED] = 'N';
      r[idx.VEHICLES_IN_ACCIDENT] = k.vehicles.length + 1;
      r[idx.FATALITIES] = k.fatalities;
      r[idx.INJURIES] = k.injuries;
      r[idx.TOW_AWAY] = k.towAway ? 'Y' : 'N';
      r[idx.FEDERAL_RECORDABLE] = 'Y';
      r[idx.STATE_RECORDABLE] = 'Y';
      r[idx.UPLOAD_DOT_NUMBER] = String(c.dot).padStart(8, '0');
      r[idx.ADD_DATE] = ymd(Math.max(0, k.daysAgo - 10));
      r[idx.CRASH_CARRIER_NAME] = c.name;
      r[idx.CRASH_CARRIER_STATE] = c.state;
      r[idx.CRASH_EVENT_SEQ_ID_DESC] = '1:13:Collision involving motor vehicle in transport';
      out.push(r.map(q).join(','));
    });
  }
}

const INSP_IDX = Object.fromEntries(INSPECTION_HEADER.map((h, i) => [h, i])) as Record<string, number>;
function inspectionRows(seed: number, c: SampleCarrier, out: string[]): void {
  for (const i of sampleInspections(seed, c)) {
    const r: (string | number)[] = new Array(INSPECTION_HEADER.length).fill('');
    r[INSP_IDX.CHANGE_DATE] = ymd(Math.max(0, i.daysAgo - 2));
    r[INSP_IDX.INSPECTION_ID] = i.id;
    r[INSP_IDX.DOT_NUMBER] = c.dot;
    r[INSP_IDX.REPORT_STATE] = c.state;
    r[INSP_IDX.REPORT_NUMBER] = `${c.state}${i.id}`;
    r[INSP_IDX.INSP_DATE] = ymd(i.daysAgo);
    r[INSP_IDX.INSP_LEVEL_ID] = i.level;
    r[INSP_IDX.CI_STATUS_CODE] = 'C';
    r[INSP_IDX.HAZMAT_PLACARD_REQ] = i.hazmat ? 'Y' : 'N';
    r[INSP_IDX.VIOL_TOTAL] = i.driverViol + i.vehicleViol + i.hazmatOos;
    r[INSP_IDX.OOS_TOTAL] = i.driverOos + i.vehicleOos + i.hazmatOos;
    r[INSP_IDX.DRIVER_VIOL_TOTAL] = i.driverViol;
    r[INSP_IDX.DRIVER_OOS_TOTAL] = i.driverOos;
    r[INSP_IDX.VEHICLE_VIOL_TOTAL] = i.vehicleViol;
    r[INSP_IDX.VEHICLE_OOS_TOTAL] = i.vehicleOos;
    r[INSP_IDX.HAZMAT_VIOL_TOTAL] = i.hazmatOos;
    r[INSP_IDX.HAZMAT_OOS_TOTAL] = i.hazmatOos;
    r[INSP_IDX.UPLOAD_DOT_NUMBER] = String(c.dot).padStart(8, '0');
    r[INSP_IDX.INSP_CARRIER_NAME] = c.name;
    r[INSP_IDX.INSP_CARRIER_STATE] = c.state;
    r[INSP_IDX.INSP_CARRIER_ZIP_CODE] = c.zip;
    r[INSP_IDX.DOCKET_NUMBER] = c.docket ?? 0;
    r[INSP_IDX.INSP_INTERSTATE] = c.operation === 'A' ? 'Y' : 'N';
    out.push(r.map(q).join(','));
  }
}

function unitRows(seed: number, c: SampleCarrier, out: string[]): void {
  for (const i of sampleInspections(seed, c)) {
    i.units.forEach((u, k) => {
      const trailer = u >= c.powerUnits;
      out.push(
        [
          ymd(i.daysAgo),
          i.id,
          i.id * 4 + k,
          trailer ? 9 : 11,
          k + 1,
          trailer ? 'UTIL' : MAKES[Math.abs(u) % MAKES.length],
          u,
          `P${(c.idx * 13 + u) % 1_000_000}`,
          c.state,
          unitVin(c, u),
          'N',
          '',
        ]
          .map(q)
          .join(','),
      );
    });
  }
}

function violationRows(seed: number, c: SampleCarrier, out: string[]): void {
  for (const i of sampleInspections(seed, c)) {
    let seq = 0;
    const push = (unit: 'D' | 'V', oos: boolean, part: string, section: string, cat: number) => {
      seq++;
      out.push(
        [ymd(i.daysAgo), i.id, i.id * 8 + seq, seq, part, section, unit, unit === 'D' ? '' : i.id * 4, cat, oos ? 'Y' : 'N', '', '']
          .map(q)
          .join(','),
      );
    };
    for (let k = 0; k < i.driverViol; k++) push('D', k < i.driverOos, '395', k === 0 ? '8' : '3A1', 2);
    for (let k = 0; k < i.vehicleViol; k++) push('V', k < i.vehicleOos, '393', k % 2 ? '9' : '47E', 5);
  }
}

/** SMS output row: counts from the carrier's 24-month inspections; measures from OOS shares. */
function smsRow(seed: number, c: SampleCarrier, passenger: boolean): string | null {
  const insp = sampleInspections(seed, c).filter((i) => i.daysAgo <= 730);
  if (insp.length === 0) return null;
  const rng = new Rng(hash32(seed ^ 0x3c6ef372, c.idx));
  const drv = insp.filter((i) => i.level !== 5);
  const veh = insp.filter((i) => i.level !== 3);
  const cells: (string | number)[] = [
    c.dot,
    insp.length,
    drv.length,
    drv.filter((i) => i.driverOos > 0).length,
    veh.length,
    veh.filter((i) => i.vehicleOos > 0).length,
  ];
  for (const b of ['UNSAFE_DRIV', 'HOS_DRIV', 'DRIV_FIT', 'CONTR_SUBST', 'VEH_MAINT']) {
    const withViol =
      b === 'VEH_MAINT'
        ? veh.filter((i) => i.vehicleViol > 0).length
        : b === 'CONTR_SUBST'
          ? 0
          : Math.round(drv.filter((i) => i.driverViol > 0).length / (b === 'UNSAFE_DRIV' ? 2 : 1));
    const measure = withViol ? Math.round(rng.next() * 8 * c.risk * 100) / 100 : 0;
    const ac = rng.bool(0.002 * c.risk) ? 'Y' : 'N';
    if (!passenger) cells.push(withViol, measure || 0, ac);
    else {
      const pctVal = insp.length < 5 ? 'Less than 5 vehicle inspections' : `${Math.min(99, Math.round(rng.next() * 60 * c.risk))}%`;
      const p = Number.parseInt(pctVal, 10);
      const alert = Number.isFinite(p) && p >= (b === 'UNSAFE_DRIV' || b === 'HOS_DRIV' ? 50 : 65) ? 'Y' : 'N';
      cells.push(withViol, measure || 0, pctVal, alert, ac, alert);
    }
  }
  return cells.map(q).join(',');
}

function* liRows(seed: number, count: number): Generator<{ rev: string[]; auth: string[]; ins: string[]; oos: string[] }> {
  for (let i = 0; i < count; i++) {
    const c = sampleCarrier(seed, i);
    const rev: string[] = [];
    const auth: string[] = [];
    const ins: string[] = [];
    const oos: string[] = [];
    const dot8 = String(c.dot).padStart(8, '0');
    if (c.docket) {
      for (const r of c.revocations) {
        rev.push(
          [
            `MC${c.docket}`,
            dot8,
            'COMMON',
            mdy(r.daysAgo + 30),
            r.involuntary ? 'INVOLUNTARY REVOCATION' : 'VOLUNTARY REVOCATION',
            mdy(r.daysAgo),
          ]
            .map((v) => `"${v}"`)
            .join(','),
        );
      }
      const revokedNow = c.revocations.some((r) => r.involuntary && r.daysAgo < 365);
      const stat = revokedNow ? 'I' : 'A';
      const k5 = (n: number) => String(n).padStart(5, '0');
      const row = [
        `MC${c.docket}`,
        dot8,
        '',
        '',
        stat,
        c.idx % 4 === 0 ? stat : 'N',
        'N',
        'N',
        'N',
        'N',
        'N',
        'N',
        'N',
        c.passenger ? 'N' : 'Y',
        c.passenger ? 'Y' : 'N',
        'N',
        'N',
        'N',
        k5(c.bipdRequiredK),
        'Y',
        'N',
        k5(c.bipdOnFileK),
        k5(c.bipdOnFileK ? 100 : 0),
        '00000',
        'N',
        '',
        c.name,
        c.street,
        '',
        c.city,
        c.state,
        'US',
        c.zip,
        c.phone.replace(/\D/g, ''),
        '',
        c.street,
        '',
        c.city,
        c.state,
        'US',
        c.zip,
        '',
        '',
      ];
      auth.push(row.map(q).join(','));
      if (c.bipdOnFileK > 0)
        ins.push(
          [`MC${c.docket}`, '1', 'P', c.bipdOnFileK, 0, `POL${c.idx}`, mdy(Math.min(c.addDaysAgo, 300)), '91X', 'PROGRESSIVE COUNTY MUTUAL']
            .map(q)
            .join(','),
        );
    }
    if (c.oosOrder) {
      oos.push(
        [
          c.dot,
          c.name,
          '',
          iso(c.oosOrder.daysAgo),
          c.oosOrder.active ? 'Failure to pay civil penalty' : 'Imminent hazard',
          c.oosOrder.active ? 'ACTIVE' : 'RESCINDED',
          c.oosOrder.active ? '' : iso(Math.max(0, c.oosOrder.daysAgo - 30)),
        ]
          .map(q)
          .join(','),
      );
    }
    yield { rev, auth, ins, oos };
  }
}

/**
 * Every FMCSA sample file for `opts` (`carriers` overrides the scale's count,
 * for tests that need a few thousand carriers in well under a second).
 */
export async function* generateFmcsaSample(opts: SampleOptions & { carriers?: number }): AsyncGenerator<SampleFile> {
  const seed = opts.seed;
  const n = opts.carriers ?? FMCSA_CARRIERS[opts.scale];
  const head = (h: readonly string[]) => h.join(',');
  yield {
    path: 'fmcsa/census/Company_Census_File.csv',
    content: chunked(head(COMPANY_CENSUS_HEADER), n, seed, (c, out) => out.push(censusRow(c))),
  };
  yield { path: 'fmcsa/crash/Crash_File.csv', content: chunked(head(CRASH_HEADER), n, seed, (c, out) => crashRows(seed, c, out)) };
  yield {
    path: 'fmcsa/inspection/Vehicle_Inspection_File.csv',
    content: chunked(head(INSPECTION_HEADER), n, seed, (c, out) => inspectionRows(seed, c, out)),
  };
  yield {
    path: 'fmcsa/inspection/Inspections_Per_Unit.csv',
    content: chunked(head(INSPECTION_UNITS_HEADER), n, seed, (c, out) => unitRows(seed, c, out)),
  };
  yield {
    path: 'fmcsa/inspection/Vehicle_Inspections_and_Violations.csv',
    content: chunked(head(VIOLATIONS_HEADER), n, seed, (c, out) => violationRows(seed, c, out)),
  };
  // SMS: header quoted, rows unquoted (as FMCSA publishes it).
  const smsProperty = chunked(SMS_PROPERTY_HEADER.map((h) => `"${h}"`).join(','), n, seed, (c, out) => {
    if (c.passenger) return;
    const r = smsRow(seed, c, false);
    if (r) out.push(r);
  });
  if (opts.scale === 'small') {
    // The real SMS download is a zip; the small sample is zipped too so the unzip path is exercised.
    let text = '';
    for await (const ch of smsProperty) text += ch;
    yield {
      path: 'fmcsa/sms/SMS_AB_PassProperty_2026Nov.zip',
      content: zipSync({
        'SMS_ReadMe_PassProperty.txt': new TextEncoder().encode('Sample SMS ReadMe\n'),
        'SMS_AB_PassProperty_2026Nov.txt': new TextEncoder().encode(text),
      }),
    };
  } else {
    yield { path: 'fmcsa/sms/SMS_AB_PassProperty_2026Nov.txt', content: smsProperty };
  }
  yield {
    path: 'fmcsa/sms/SMS_AB_Pass_2026Nov.txt',
    content: chunked(SMS_PASSENGER_HEADER.map((h) => `"${h}"`).join(','), n, seed, (c, out) => {
      if (!c.passenger) return;
      const r = smsRow(seed, c, true);
      if (r) out.push(r);
    }),
  };
  const rev = [REVOCATION_HEADER.map((h) => `"${h}"`).join(',')];
  const auth = [head(AUTHORITY_HEADER)];
  const ins = [head(INSURANCE_HEADER)];
  const oos = [head(OOS_ORDERS_HEADER)];
  for (const r of liRows(seed, n)) {
    rev.push(...r.rev);
    auth.push(...r.auth);
    ins.push(...r.ins);
    oos.push(...r.oos);
  }
  yield { path: 'fmcsa/licensing/revocation_2026_11_20.txt', content: rev.join('\n') + '\n' };
  yield {
    path: 'fmcsa/licensing/Carrier_All_With_History.txt',
    content: (function* () {
      for (let i = 0; i < auth.length; i += 50_000) yield auth.slice(i, i + 50_000).join('\n') + '\n';
    })(),
  };
  yield {
    path: 'fmcsa/licensing/Insur_All_With_History.txt',
    content: (function* () {
      for (let i = 0; i < ins.length; i += 50_000) yield ins.slice(i, i + 50_000).join('\n') + '\n';
    })(),
  };
  yield { path: 'fmcsa/oos/OUT_OF_SERVICE_ORDERS.csv', content: oos.join('\n') + '\n' };
}

export const fmcsaSampleGenerator: SampleGenerator = {
  name: 'fmcsa',
  generate: generateFmcsaSample,
};
