/**
 * The carrier risk model: a pure, deterministic function of one carrier's
 * features (derived nightly from the FMCSA bulk files) to a score, a level, a
 * recommendation and red flags a broker can defend line by line.
 *
 * ONE definition: every rule is a row of `RISK_RULES` (a condition over the
 * feature row, a weight, a severity and a sentence). `assessCarrier` evaluates
 * the rows in TypeScript; `riskScoreSelectSql()` compiles the same rows to the SQL
 * that scores all 4.4 M carriers at publish. test/fmcsa checks they agree.
 *
 * Scoring: risk_score = min(100, sum of the weights of the rules that fire).
 * Every weight is positive and every condition compares a "worse is larger"
 * feature with `>`/`>=` (or a fixed category), so more OOS, more crashes or
 * more revocations can never lower the score (property-tested).
 * A NULL feature never fires a rule (no data is not evidence either way; the
 * API says "no data", never "clean").
 */

import { z } from 'zod';

/** Model version: bump when a rule, weight or threshold changes (stored with every assessment). */
export const RISK_MODEL_VERSION = 'fmcsa-risk-2026.11.1';

/** National OOS averages QCMobile still reports (frozen at 2009-10 by FMCSA): percent of inspections. */
export const NATIONAL_OOS_AVERAGES = { driver: 5.51, vehicle: 20.72, hazmat: 4.5 } as const;

/** HMSP crash-rate threshold, 49 CFR 385.407: crashes per power unit. */
export const CRASH_RATE_THRESHOLD = 0.136;

/** Minimum inspections before an OOS rate is judged (one bad roadside stop is not a pattern). */
export const MIN_INSPECTIONS_FOR_RATE = 3;

/** The seven BASICs in FMCSA order, with the feature prefix used in the feature row. */
export const BASICS = [
  { basic: 'Unsafe Driving', key: 'unsafe_driv', group: 'crash_hos_unsafe' },
  { basic: 'Hours-of-Service Compliance', key: 'hos_driv', group: 'crash_hos_unsafe' },
  { basic: 'Driver Fitness', key: 'driv_fit', group: 'fitness_drugs_vehicle' },
  { basic: 'Controlled Substances/Alcohol', key: 'contr_subst', group: 'fitness_drugs_vehicle' },
  { basic: 'Vehicle Maintenance', key: 'veh_maint', group: 'fitness_drugs_vehicle' },
  { basic: 'Hazardous Materials Compliance', key: 'hm_compliance', group: 'hm' },
  { basic: 'Crash Indicator', key: 'crash_ind', group: 'crash_hos_unsafe' },
] as const;

export const CarrierClassSchema = z.enum(['general', 'hazmat', 'passenger']);
export type CarrierClass = z.infer<typeof CarrierClassSchema>;

/**
 * FMCSA intervention thresholds (percentiles): Unsafe Driving, HOS, Crash
 * 65/60/50; Driver Fitness, Drugs/Alcohol, Vehicle Maintenance 80/75/65;
 * HM Compliance 80 for every class.
 */
export const BASIC_THRESHOLDS: Record<CarrierClass, Record<(typeof BASICS)[number]['group'], number>> = {
  general: { crash_hos_unsafe: 65, fitness_drugs_vehicle: 80, hm: 80 },
  hazmat: { crash_hos_unsafe: 60, fitness_drugs_vehicle: 75, hm: 80 },
  passenger: { crash_hos_unsafe: 50, fitness_drugs_vehicle: 65, hm: 80 },
};

/** One carrier's feature row (the columns of `carrier_risk`). Null = not known from the published data. */
export const CarrierFeaturesSchema = z.object({
  dot_number: z.number(),
  legal_name: z.string().nullable(),
  phy_state: z.string().nullable(),
  /** Census STATUS_CODE: A active, I inactive. */
  status_code: z.string().nullable(),
  carrier_class: CarrierClassSchema,
  /** L&I operating authority: ACTIVE (any of common/contract/broker A), INACTIVE (dockets, none active), NONE (no docket: private / intrastate). */
  authority_status: z.enum(['ACTIVE', 'INACTIVE', 'NONE']).nullable(),
  /** Days since the census ADD_DATE (bulk files carry no authority grant date; documented proxy). */
  authority_age_days: z.number().nullable(),
  revocations_total: z.number(),
  /** Involuntary revocations effective in the last 365 days. */
  revocations_recent: z.number(),
  oos_orders_active: z.number(),
  oos_orders_total: z.number(),
  /** S satisfactory, C conditional, U unsatisfactory, null unrated. */
  safety_rating: z.string().nullable(),
  mcs150_age_days: z.number().nullable(),
  power_units: z.number().nullable(),
  drivers: z.number().nullable(),
  inspections_24m: z.number(),
  driver_inspections_24m: z.number(),
  driver_oos_24m: z.number(),
  vehicle_inspections_24m: z.number(),
  vehicle_oos_24m: z.number(),
  hazmat_inspections_24m: z.number(),
  hazmat_oos_24m: z.number(),
  /** Percent; null when fewer than MIN_INSPECTIONS_FOR_RATE inspections of that kind. */
  driver_oos_rate: z.number().nullable(),
  vehicle_oos_rate: z.number().nullable(),
  hazmat_oos_rate: z.number().nullable(),
  crashes_24m: z.number(),
  fatal_crashes_24m: z.number(),
  injury_crashes_24m: z.number(),
  towaway_crashes_24m: z.number(),
  crashes_per_power_unit: z.number().nullable(),
  /** BASIC measures / percentiles / alerts, flat: `<key>_measure`, `<key>_pct`, `<key>_alert`, `<key>_ac`. */
  basics: z.record(
    z.string(),
    z.object({
      measure: z.number().nullable(),
      percentile: z.number().nullable(),
      alert: z.boolean().nullable(),
      acute_critical: z.boolean().nullable(),
    }),
  ),
  /** BASICs whose public percentile is at or above the class threshold (or with a published BASIC alert). */
  basics_over_threshold: z.number(),
  /** Acute/Critical violations found in investigations (SMS `*_AC` = Y). */
  basics_acute_critical: z.number(),
  /** BIPD insurance in thousands of dollars (L&I `BIPD_FILE` / `MIN_COV_AMOUNT`). */
  bipd_on_file_k: z.number().nullable(),
  bipd_required_k: z.number().nullable(),
  prior_revoke_flag: z.boolean().nullable(),
  /** Other carriers sharing this carrier's phone, e-mail, physical address, or a VIN. */
  shared_phone_carriers: z.number(),
  shared_email_carriers: z.number(),
  shared_address_carriers: z.number(),
  shared_vin_carriers: z.number(),
  /** Of those, carriers that are revoked or under an OOS order (the chameleon pattern). */
  shared_with_revoked_carriers: z.number(),
});
export type CarrierFeatures = z.infer<typeof CarrierFeaturesSchema>;

export type Severity = 'critical' | 'high' | 'medium' | 'low';

export interface RedFlag {
  code: string;
  severity: Severity;
  message: string;
}

export interface BasicResult {
  basic: string;
  measure: number | null;
  percentile: number | null;
  threshold: number;
  exceeded: boolean;
  alert: boolean | null;
}

export type RiskLevel = 'LOW' | 'MODERATE' | 'HIGH' | 'CRITICAL';
export type Recommendation = 'APPROVE' | 'CAUTION' | 'REJECT';

export interface RiskAssessment {
  risk_score: number;
  risk_level: RiskLevel;
  recommendation: Recommendation;
  red_flags: RedFlag[];
  basics: BasicResult[];
  model_version: string;
}

/** A scalar feature a rule may test (flat columns of the feature row). */
export type ScalarFeature = Exclude<keyof CarrierFeatures, 'basics' | 'legal_name' | 'phy_state' | 'dot_number' | 'carrier_class'>;
type Operand = number | string | { ref: ScalarFeature; times?: number };
/** Atom: [feature, operator, operand]. A null feature (or operand) is false, as in SQL. */
export type Atom = readonly [ScalarFeature, '>' | '>=' | '=' | '<', Operand];

export interface RiskRule {
  code: string;
  severity: Severity;
  weight: number;
  /** All atoms must hold. */
  when: readonly Atom[];
  /** Why the rule exists (rendered into docs/fmcsa-risk-model.md by `npm run docs:tables`). */
  why: string;
  message(f: CarrierFeatures): string;
}

const pct = (x: number | null) => (x == null ? 'n/a' : `${Math.round(x * 10) / 10}%`);

/**
 * Every rule of the model. Order is the order red flags are listed in.
 * Weights: a critical fact alone (weight >= 60) puts the score in CRITICAL and
 * the recommendation at REJECT; high 10-30; medium 8-12; low 3-4 (ranges stated with the generated table in docs/fmcsa-risk-model.md).
 */
export const RISK_RULES: readonly RiskRule[] = [
  {
    code: 'OOS_ORDER_ACTIVE',
    severity: 'critical',
    weight: 70,
    when: [['oos_orders_active', '>=', 1]],
    why: 'An active FMCSA out-of-service order forbids the carrier to operate; tendering a load to it is negligent selection on its face.',
    message: (f) => `Carrier is under ${f.oos_orders_active} active FMCSA out-of-service order(s) and may not operate.`,
  },
  {
    code: 'SAFETY_RATING_UNSATISFACTORY',
    severity: 'critical',
    weight: 70,
    when: [['safety_rating', '=', 'U']],
    why: 'An Unsatisfactory rating (49 CFR 385) leads to an OOS order; insurers and brokers treat it as disqualifying.',
    message: () => 'FMCSA safety rating is Unsatisfactory.',
  },
  {
    code: 'AUTHORITY_INACTIVE',
    severity: 'critical',
    weight: 60,
    when: [['authority_status', '=', 'INACTIVE']],
    why: 'For-hire interstate carriers need active operating authority (MC); all its dockets are inactive.',
    message: () => 'Operating authority on file with FMCSA is not active (no active common, contract or broker authority).',
  },
  {
    code: 'REGISTRATION_INACTIVE',
    severity: 'critical',
    weight: 60,
    when: [['status_code', '=', 'I']],
    why: 'The USDOT registration itself is inactive in the census.',
    message: () => 'USDOT registration status is Inactive in the FMCSA census.',
  },
  {
    code: 'INSURANCE_BELOW_REQUIRED',
    severity: 'critical',
    weight: 60,
    when: [
      ['bipd_required_k', '>', 0],
      ['bipd_required_k', '>', { ref: 'bipd_on_file_k' }],
    ],
    why: 'BIPD liability on file below the federal minimum (49 CFR 387.9: $750k general freight) leaves the shipper exposed; "00000" on file is a fact, not missing data.',
    message: (f) => `BIPD insurance on file is $${(f.bipd_on_file_k ?? 0) * 1000} against $${(f.bipd_required_k ?? 0) * 1000} required.`,
  },
  {
    code: 'REVOKED_RECENTLY',
    severity: 'high',
    weight: 25,
    when: [['revocations_recent', '>=', 1]],
    why: 'An involuntary revocation in the last 12 months (usually insurance lapse or unpaid fines) is the strongest predictor of a further lapse.',
    message: (f) => `${f.revocations_recent} involuntary authority revocation(s) in the last 12 months.`,
  },
  {
    code: 'REPEAT_REVOCATIONS',
    severity: 'medium',
    weight: 10,
    when: [['revocations_total', '>=', 3]],
    why: 'Repeated revocations (even when cured) show a pattern of lapses in insurance or compliance.',
    message: (f) => `${f.revocations_total} authority revocations on record.`,
  },
  {
    code: 'CHAMELEON_LINK',
    severity: 'high',
    weight: 30,
    when: [['shared_with_revoked_carriers', '>=', 1]],
    why: 'Sharing phone, e-mail, address or a vehicle with a revoked or OOS-ordered carrier is the chameleon-carrier pattern (GAO-12-364).',
    message: (f) => `Shares phone, e-mail, address or a VIN with ${f.shared_with_revoked_carriers} revoked or out-of-service carrier(s).`,
  },
  {
    code: 'SHARED_IDENTITY',
    severity: 'medium',
    weight: 8,
    when: [['shared_phone_carriers', '>=', 1]],
    why: 'A phone number registered to another USDOT number needs an explanation (affiliate, dispatcher, or reincarnation).',
    message: (f) => `Phone number is also registered to ${f.shared_phone_carriers} other carrier(s).`,
  },
  {
    code: 'SHARED_EMAIL',
    severity: 'medium',
    weight: 8,
    when: [['shared_email_carriers', '>=', 1]],
    why: 'E-mail shared with another USDOT number: same reasoning as phone.',
    message: (f) => `E-mail address is also registered to ${f.shared_email_carriers} other carrier(s).`,
  },
  {
    code: 'SHARED_ADDRESS',
    severity: 'low',
    weight: 4,
    when: [['shared_address_carriers', '>=', 1]],
    why: 'Shared physical address is common for terminals and agents, so weighed low.',
    message: (f) => `Physical address is shared with ${f.shared_address_carriers} other carrier(s).`,
  },
  {
    code: 'SHARED_VIN',
    severity: 'high',
    weight: 15,
    when: [['shared_vin_carriers', '>=', 1]],
    why: 'A VIN inspected or crashed under another USDOT number means vehicles moved between registrations.',
    message: (f) => `Vehicles (VIN) also appear under ${f.shared_vin_carriers} other carrier(s).`,
  },
  {
    code: 'PRIOR_REVOKE',
    severity: 'high',
    weight: 15,
    when: [['prior_revoke_flag', '=', 'true']],
    why: 'The census PRIOR_REVOKE_FLAG marks a registrant whose earlier USDOT number was revoked.',
    message: () => 'Census marks a prior revoked USDOT registration for this carrier.',
  },
  {
    code: 'SAFETY_RATING_CONDITIONAL',
    severity: 'high',
    weight: 20,
    when: [['safety_rating', '=', 'C']],
    why: 'A Conditional rating means a compliance review found inadequate safety controls.',
    message: () => 'FMCSA safety rating is Conditional.',
  },
  {
    code: 'NEW_AUTHORITY',
    severity: 'medium',
    weight: 12,
    when: [['authority_age_days', '<', 90]],
    why: 'Most brokers require 90 days of authority; new registrations are where fraud concentrates.',
    message: (f) => `Registered with FMCSA only ${f.authority_age_days} days ago.`,
  },
  {
    code: 'MCS150_OUTDATED',
    severity: 'low',
    weight: 4,
    when: [['mcs150_age_days', '>', 730]],
    why: 'The MCS-150 must be updated every 24 months (49 CFR 390.19); stale census data weakens every other check.',
    message: (f) => `MCS-150 last updated ${f.mcs150_age_days} days ago (biennial update overdue).`,
  },
  {
    code: 'DRIVER_OOS_ABOVE_NATIONAL',
    severity: 'medium',
    weight: 10,
    when: [['driver_oos_rate', '>', NATIONAL_OOS_AVERAGES.driver]],
    why: 'Driver OOS rate above the national average (5.51 %) is an insurer alert (CAB).',
    message: (f) =>
      `Driver out-of-service rate ${pct(f.driver_oos_rate)} is above the national average of ${NATIONAL_OOS_AVERAGES.driver}%.`,
  },
  {
    code: 'DRIVER_OOS_SEVERE',
    severity: 'high',
    weight: 10,
    when: [['driver_oos_rate', '>', NATIONAL_OOS_AVERAGES.driver * 2]],
    why: 'Twice the national driver OOS rate.',
    message: (f) => `Driver out-of-service rate ${pct(f.driver_oos_rate)} is more than twice the national average.`,
  },
  {
    code: 'VEHICLE_OOS_ABOVE_NATIONAL',
    severity: 'medium',
    weight: 10,
    when: [['vehicle_oos_rate', '>', NATIONAL_OOS_AVERAGES.vehicle]],
    why: 'Vehicle OOS rate above the national average (20.72 %).',
    message: (f) =>
      `Vehicle out-of-service rate ${pct(f.vehicle_oos_rate)} is above the national average of ${NATIONAL_OOS_AVERAGES.vehicle}%.`,
  },
  {
    code: 'VEHICLE_OOS_SEVERE',
    severity: 'high',
    weight: 10,
    when: [['vehicle_oos_rate', '>', NATIONAL_OOS_AVERAGES.vehicle * 1.5]],
    why: 'One and a half times the national vehicle OOS rate.',
    message: (f) => `Vehicle out-of-service rate ${pct(f.vehicle_oos_rate)} is more than 1.5 times the national average.`,
  },
  {
    code: 'HAZMAT_OOS_ABOVE_NATIONAL',
    severity: 'medium',
    weight: 10,
    when: [['hazmat_oos_rate', '>', NATIONAL_OOS_AVERAGES.hazmat]],
    why: 'Hazmat OOS rate above the national average (4.50 %); HMSP holders must stay out of the worst 30 %.',
    message: (f) =>
      `Hazmat out-of-service rate ${pct(f.hazmat_oos_rate)} is above the national average of ${NATIONAL_OOS_AVERAGES.hazmat}%.`,
  },
  {
    code: 'FATAL_CRASH',
    severity: 'high',
    weight: 15,
    when: [['fatal_crashes_24m', '>=', 1]],
    why: 'A fatal crash in 24 months is what negligent-selection suits are about.',
    message: (f) => `${f.fatal_crashes_24m} fatal crash(es) in the last 24 months.`,
  },
  {
    code: 'INJURY_CRASHES',
    severity: 'medium',
    weight: 8,
    when: [['injury_crashes_24m', '>=', 2]],
    why: 'Repeated injury crashes in 24 months.',
    message: (f) => `${f.injury_crashes_24m} injury crashes in the last 24 months.`,
  },
  {
    code: 'CRASH_RATE_HIGH',
    severity: 'high',
    weight: 12,
    when: [
      ['crashes_24m', '>=', 2],
      ['crashes_per_power_unit', '>', CRASH_RATE_THRESHOLD],
    ],
    why: 'Crashes per power unit above 0.136, the HMSP threshold (49 CFR 385.407); two crashes minimum so one crash of a one-truck carrier is not a rate.',
    message: (f) =>
      `${f.crashes_24m} crashes in 24 months on ${f.power_units} power unit(s): ${f.crashes_per_power_unit?.toFixed(3)} per unit, above the 0.136 threshold.`,
  },
  {
    code: 'BASIC_OVER_THRESHOLD',
    severity: 'high',
    weight: 15,
    when: [['basics_over_threshold', '>=', 1]],
    why: "A BASIC at or above its intervention threshold (or under a published alert) is FMCSA's own prioritisation signal.",
    message: (f) => `${f.basics_over_threshold} BASIC(s) at or above the FMCSA intervention threshold.`,
  },
  {
    code: 'BASIC_ACUTE_CRITICAL',
    severity: 'medium',
    weight: 10,
    when: [['basics_acute_critical', '>=', 1]],
    why: 'Acute/Critical violations found in an investigation (SMS *_AC = Y).',
    message: (f) => `Acute or critical violations found in investigation in ${f.basics_acute_critical} BASIC(s).`,
  },
  {
    code: 'NO_POWER_UNITS',
    severity: 'medium',
    weight: 10,
    when: [['power_units', '<', 1]],
    why: 'A carrier with zero power units cannot haul the load itself (double-brokering signal).',
    message: () => 'Census reports zero power units.',
  },
  {
    code: 'NO_RECENT_INSPECTIONS',
    severity: 'low',
    weight: 3,
    when: [
      ['inspections_24m', '<', 1],
      ['power_units', '>=', 5],
    ],
    why: 'A fleet of five or more with no roadside inspection in 24 months gives no on-road evidence either way.',
    message: (f) => `No roadside inspections in 24 months despite ${f.power_units} power units.`,
  },
];

/** Score at or above which the level is CRITICAL / HIGH / MODERATE. */
export const LEVEL_CUTS = { CRITICAL: 60, HIGH: 35, MODERATE: 15 } as const;
/** Recommendation rules: REJECT on any critical flag or score >= 60; CAUTION on any high flag or score >= 25; else APPROVE. */
export const RECOMMENDATION_CUTS = { REJECT: 60, CAUTION: 25 } as const;

function scalar(f: CarrierFeatures, k: ScalarFeature): number | string | null {
  const v = f[k] as unknown;
  if (v == null) return null;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return v as number | string;
}

/** Evaluates one atom with SQL's null semantics (null → false). */
export function evalAtom(f: CarrierFeatures, [k, op, operand]: Atom): boolean {
  const a = scalar(f, k);
  let b: number | string | null;
  if (typeof operand === 'object') {
    const r = scalar(f, operand.ref);
    b = r == null ? null : typeof r === 'number' ? r * (operand.times ?? 1) : r;
  } else b = operand;
  if (a == null || b == null) return false;
  switch (op) {
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    case '<':
      return a < b;
    case '=':
      return a === b;
  }
}

export function levelFor(score: number): RiskLevel {
  if (score >= LEVEL_CUTS.CRITICAL) return 'CRITICAL';
  if (score >= LEVEL_CUTS.HIGH) return 'HIGH';
  if (score >= LEVEL_CUTS.MODERATE) return 'MODERATE';
  return 'LOW';
}

export function recommendationFor(score: number, flags: readonly { severity: string }[]): Recommendation {
  if (score >= RECOMMENDATION_CUTS.REJECT || flags.some((f) => f.severity === 'critical')) return 'REJECT';
  if (score >= RECOMMENDATION_CUTS.CAUTION || flags.some((f) => f.severity === 'high')) return 'CAUTION';
  return 'APPROVE';
}

/** Threshold of a BASIC for a carrier class. */
export function basicThreshold(cls: CarrierClass, key: string): number {
  const b = BASICS.find((x) => x.key === key);
  if (!b) throw new RangeError(`unknown BASIC ${key}`);
  return BASIC_THRESHOLDS[cls][b.group];
}

/** The seven BASICs with measure, percentile (public for passenger carriers only), threshold and flags. */
export function assessBasics(f: CarrierFeatures): BasicResult[] {
  return BASICS.map((b) => {
    const v = f.basics[b.key] ?? { measure: null, percentile: null, alert: null, acute_critical: null };
    const threshold = basicThreshold(f.carrier_class, b.key);
    return {
      basic: b.basic,
      measure: v.measure,
      percentile: v.percentile,
      threshold,
      exceeded: (v.percentile != null && v.percentile >= threshold) || v.alert === true,
      alert: v.alert,
    };
  });
}

/**
 * Assesses one carrier. Pure and deterministic: the same features always give
 * the same assessment (and the same score as the publish-time SQL).
 */
export function assessCarrier(features: CarrierFeatures): RiskAssessment {
  const fired = RISK_RULES.filter((r) => r.when.every((a) => evalAtom(features, a)));
  const score = Math.min(
    100,
    fired.reduce((s, r) => s + r.weight, 0),
  );
  const red_flags = fired.map((r) => ({ code: r.code, severity: r.severity, message: r.message(features) }));
  return {
    risk_score: score,
    risk_level: levelFor(score),
    recommendation: recommendationFor(score, red_flags),
    red_flags,
    basics: assessBasics(features),
    model_version: RISK_MODEL_VERSION,
  };
}

// ---- SQL compilation of the same rules (used by the publish-time derive) ----

function sqlOperand(o: Operand): string {
  if (typeof o === 'number') return String(o);
  if (typeof o === 'string') {
    if (!/^[A-Za-z0-9_ ]*$/.test(o)) throw new Error(`unsafe literal in rule: ${o}`);
    return `'${o}'`;
  }
  return o.times && o.times !== 1 ? `(${o.ref} * ${o.times})` : o.ref;
}

function sqlColumn(k: ScalarFeature): string {
  // Booleans compare as the strings 'true'/'false' in both evaluators.
  return k === 'prior_revoke_flag' ? `CAST(${k} AS VARCHAR)` : k;
}

/** SQL boolean expression of a rule (columns of the feature table). */
export function ruleConditionSql(r: RiskRule): string {
  return r.when.map(([k, op, o]) => `(${sqlColumn(k)} ${op} ${sqlOperand(o)})`).join(' AND ');
}

/**
 * SQL `SELECT` scoring every row of `source` (a table or subquery with the
 * feature columns), compiled from RISK_RULES (the one definition). Adds
 * `risk_score`, `red_flag_codes`, `risk_level` and `recommendation` after the
 * source's columns. Each rule's condition is evaluated once per row.
 */
export function riskScoreSelectSql(source: string): string {
  const rules = RISK_RULES.map((r, i) => `COALESCE(${ruleConditionSql(r)}, false) AS _r${i}`).join(',\n    ');
  const sum = RISK_RULES.map((r, i) => `(CASE WHEN _r${i} THEN ${r.weight} ELSE 0 END)`).join(' + ');
  const any = (sev: Severity) =>
    RISK_RULES.map((r, i) => (r.severity === sev ? `_r${i}` : null))
      .filter(Boolean)
      .join(' OR ') || 'false';
  const codes = `list_filter([${RISK_RULES.map((r, i) => `CASE WHEN _r${i} THEN '${r.code}' END`).join(', ')}], x -> x IS NOT NULL)`;
  const flags = RISK_RULES.map((_, i) => `_r${i}`).join(', ');
  return `SELECT * EXCLUDE (_critical, _high),
  CASE WHEN risk_score >= ${LEVEL_CUTS.CRITICAL} THEN 'CRITICAL' WHEN risk_score >= ${LEVEL_CUTS.HIGH} THEN 'HIGH' WHEN risk_score >= ${LEVEL_CUTS.MODERATE} THEN 'MODERATE' ELSE 'LOW' END AS risk_level,
  CASE WHEN risk_score >= ${RECOMMENDATION_CUTS.REJECT} OR _critical THEN 'REJECT' WHEN risk_score >= ${RECOMMENDATION_CUTS.CAUTION} OR _high THEN 'CAUTION' ELSE 'APPROVE' END AS recommendation
FROM (
  SELECT * EXCLUDE (${flags}),
    least(100, ${sum})::INTEGER AS risk_score,
    ${codes} AS red_flag_codes,
    (${any('critical')}) AS _critical,
    (${any('high')}) AS _high
  FROM (SELECT *,
    ${rules}
  FROM ${source}) AS rules_evaluated
) AS scored`;
}

/** SQL expression: number of BASICs over the class threshold (percentile >= threshold or alert = true). */
export function basicsOverThresholdSql(): string {
  const cls = (c: CarrierClass, g: (typeof BASICS)[number]['group']) => BASIC_THRESHOLDS[c][g];
  return BASICS.map((b) => {
    const thr = `(CASE carrier_class WHEN 'passenger' THEN ${cls('passenger', b.group)} WHEN 'hazmat' THEN ${cls('hazmat', b.group)} ELSE ${cls('general', b.group)} END)`;
    return `(CASE WHEN COALESCE(${b.key}_pct >= ${thr}, false) OR COALESCE(${b.key}_alert, false) THEN 1 ELSE 0 END)`;
  }).join(' + ');
}
