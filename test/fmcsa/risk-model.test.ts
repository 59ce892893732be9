import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assessCarrier,
  basicsOverThresholdSql,
  BASICS,
  RISK_RULES,
  riskScoreSelectSql,
  type CarrierFeatures,
} from '../../ingest/fmcsa/risk-model.ts';

/** A carrier with nothing against it: active authority, rated S, clean 24 months. */
export function cleanCarrier(patch: Partial<CarrierFeatures> = {}): CarrierFeatures {
  const basics: CarrierFeatures['basics'] = {};
  for (const b of BASICS) basics[b.key] = { measure: 0, percentile: null, alert: null, acute_critical: false };
  return {
    dot_number: 1234567,
    legal_name: 'CLEAN HAULING LLC',
    phy_state: 'TX',
    status_code: 'A',
    carrier_class: 'general',
    authority_status: 'ACTIVE',
    authority_age_days: 2000,
    revocations_total: 0,
    revocations_recent: 0,
    oos_orders_active: 0,
    oos_orders_total: 0,
    safety_rating: 'S',
    mcs150_age_days: 100,
    power_units: 10,
    drivers: 12,
    inspections_24m: 20,
    driver_inspections_24m: 15,
    driver_oos_24m: 0,
    vehicle_inspections_24m: 15,
    vehicle_oos_24m: 2,
    hazmat_inspections_24m: 0,
    hazmat_oos_24m: 0,
    driver_oos_rate: 0,
    vehicle_oos_rate: 13.33,
    hazmat_oos_rate: null,
    crashes_24m: 0,
    fatal_crashes_24m: 0,
    injury_crashes_24m: 0,
    towaway_crashes_24m: 0,
    crashes_per_power_unit: 0,
    basics,
    basics_over_threshold: 0,
    basics_acute_critical: 0,
    bipd_on_file_k: 1000,
    bipd_required_k: 750,
    prior_revoke_flag: false,
    shared_phone_carriers: 0,
    shared_email_carriers: 0,
    shared_address_carriers: 0,
    shared_vin_carriers: 0,
    shared_with_revoked_carriers: 0,
    ...patch,
  };
}

/** The smallest change to a clean carrier that should raise each red flag. */
const TRIGGERS: Record<string, Partial<CarrierFeatures>> = {
  OOS_ORDER_ACTIVE: { oos_orders_active: 1, oos_orders_total: 1 },
  SAFETY_RATING_UNSATISFACTORY: { safety_rating: 'U' },
  AUTHORITY_INACTIVE: { authority_status: 'INACTIVE' },
  REGISTRATION_INACTIVE: { status_code: 'I' },
  INSURANCE_BELOW_REQUIRED: { bipd_on_file_k: 0 },
  REVOKED_RECENTLY: { revocations_recent: 1, revocations_total: 1 },
  REPEAT_REVOCATIONS: { revocations_total: 3 },
  CHAMELEON_LINK: { shared_with_revoked_carriers: 1 },
  SHARED_IDENTITY: { shared_phone_carriers: 1 },
  SHARED_EMAIL: { shared_email_carriers: 2 },
  SHARED_ADDRESS: { shared_address_carriers: 1 },
  SHARED_VIN: { shared_vin_carriers: 1 },
  PRIOR_REVOKE: { prior_revoke_flag: true },
  SAFETY_RATING_CONDITIONAL: { safety_rating: 'C' },
  NEW_AUTHORITY: { authority_age_days: 45 },
  MCS150_OUTDATED: { mcs150_age_days: 900 },
  DRIVER_OOS_ABOVE_NATIONAL: { driver_oos_24m: 1, driver_oos_rate: 6.67 },
  DRIVER_OOS_SEVERE: { driver_oos_24m: 2, driver_oos_rate: 13.33 },
  VEHICLE_OOS_ABOVE_NATIONAL: { vehicle_oos_24m: 4, vehicle_oos_rate: 26.67 },
  VEHICLE_OOS_SEVERE: { vehicle_oos_24m: 5, vehicle_oos_rate: 33.33 },
  HAZMAT_OOS_ABOVE_NATIONAL: { hazmat_inspections_24m: 10, hazmat_oos_24m: 1, hazmat_oos_rate: 10 },
  FATAL_CRASH: { crashes_24m: 1, fatal_crashes_24m: 1, crashes_per_power_unit: 0.1 },
  INJURY_CRASHES: { crashes_24m: 2, injury_crashes_24m: 2, crashes_per_power_unit: 0.1, power_units: 20 },
  CRASH_RATE_HIGH: { crashes_24m: 2, crashes_per_power_unit: 0.2 },
  BASIC_OVER_THRESHOLD: { basics_over_threshold: 1 },
  BASIC_ACUTE_CRITICAL: { basics_acute_critical: 1 },
  NO_POWER_UNITS: { power_units: 0, crashes_per_power_unit: null },
  NO_RECENT_INSPECTIONS: {
    inspections_24m: 0,
    driver_inspections_24m: 0,
    vehicle_inspections_24m: 0,
    driver_oos_24m: 0,
    vehicle_oos_24m: 0,
    driver_oos_rate: null,
    vehicle_oos_rate: null,
  },
};

describe('assessCarrier', () => {
  it('approves a clean carrier with no red flags and score 0', () => {
    const a = assessCarrier(cleanCarrier());
    expect(a).toMatchObject({ risk_score: 0, risk_level: 'LOW', recommendation: 'APPROVE', red_flags: [] });
    expect(a.basics).toHaveLength(7);
  });

  it('has a trigger for every rule and every rule code is unique', () => {
    expect(Object.keys(TRIGGERS).sort()).toEqual(RISK_RULES.map((r) => r.code).sort());
  });

  for (const rule of RISK_RULES) {
    it(`raises ${rule.code} (${rule.severity}, +${rule.weight}) with a sentence`, () => {
      const a = assessCarrier(cleanCarrier(TRIGGERS[rule.code]));
      const flag = a.red_flags.find((f) => f.code === rule.code);
      expect(flag).toBeDefined();
      expect(flag!.severity).toBe(rule.severity);
      expect(flag!.message).toMatch(/^[A-Z0-9$].*\.$/);
      expect(a.risk_score).toBeGreaterThanOrEqual(Math.min(100, rule.weight));
    });
  }

  it('REJECTs on any critical flag even when the score alone would not', () => {
    const a = assessCarrier(cleanCarrier({ status_code: 'I' }));
    expect(a.red_flags.map((f) => f.code)).toEqual(['REGISTRATION_INACTIVE']);
    expect(a.recommendation).toBe('REJECT');
  });

  it('REJECTs when the score reaches 60 without any critical flag', () => {
    const a = assessCarrier(
      cleanCarrier({ shared_with_revoked_carriers: 1, revocations_recent: 1, revocations_total: 1, authority_age_days: 30 }),
    );
    expect(a.red_flags.some((f) => f.severity === 'critical')).toBe(false);
    expect(a.risk_score).toBeGreaterThanOrEqual(60);
    expect(a).toMatchObject({ recommendation: 'REJECT', risk_level: 'CRITICAL' });
  });

  it('CAUTIONs on a single high flag', () => {
    const a = assessCarrier(cleanCarrier({ safety_rating: 'C' }));
    expect(a).toMatchObject({ risk_score: 20, risk_level: 'MODERATE', recommendation: 'CAUTION' });
  });

  it('CAUTIONs when medium flags add up to 25 or more', () => {
    const a = assessCarrier(cleanCarrier({ authority_age_days: 30, shared_phone_carriers: 1, shared_email_carriers: 1 }));
    expect(a.red_flags.every((f) => f.severity === 'medium')).toBe(true);
    expect(a).toMatchObject({ risk_score: 28, recommendation: 'CAUTION' });
  });

  it('APPROVEs below 25 with only medium and low flags', () => {
    const a = assessCarrier(cleanCarrier({ authority_age_days: 30, mcs150_age_days: 800 }));
    expect(a).toMatchObject({ risk_score: 16, risk_level: 'MODERATE', recommendation: 'APPROVE' });
  });

  it('never fires a rule on missing data (null is not evidence)', () => {
    const a = assessCarrier(
      cleanCarrier({
        safety_rating: null,
        authority_status: null,
        authority_age_days: null,
        mcs150_age_days: null,
        bipd_on_file_k: null,
        bipd_required_k: null,
        driver_oos_rate: null,
        vehicle_oos_rate: null,
      }),
    );
    expect(a.red_flags).toEqual([]);
  });

  it('marks a passenger carrier BASIC exceeded at the passenger threshold (HOS 57% vs 50)', () => {
    const f = cleanCarrier({ carrier_class: 'passenger' });
    f.basics.hos_driv = { measure: 0.18, percentile: 57, alert: null, acute_critical: false };
    const hos = assessCarrier(f).basics.find((b) => b.basic === 'Hours-of-Service Compliance')!;
    expect(hos).toEqual({
      basic: 'Hours-of-Service Compliance',
      measure: 0.18,
      percentile: 57,
      threshold: 50,
      exceeded: true,
      alert: null,
    });
    const general = assessCarrier({ ...f, carrier_class: 'general' }).basics.find((b) => b.basic === 'Hours-of-Service Compliance')!;
    expect(general).toMatchObject({ threshold: 65, exceeded: false });
    expect(assessCarrier({ ...f, carrier_class: 'hazmat' }).basics.map((b) => b.threshold)).toEqual([60, 60, 75, 75, 75, 80, 60]);
  });
});

const count = (max: number) => fc.integer({ min: 0, max });

describe('risk score monotonicity', () => {
  it('more OOS, crashes, revocations or OOS orders never lower the score', () => {
    fc.assert(
      fc.property(
        fc.record({
          insp: fc.integer({ min: 0, max: 60 }),
          dOos: count(60),
          vOos: count(60),
          crashes: count(20),
          fatal: count(5),
          inj: count(10),
          rev: count(5),
          oos: count(2),
          pu: fc.integer({ min: 1, max: 50 }),
        }),
        fc.record({ dOos: count(10), vOos: count(10), crashes: count(5), fatal: count(2), inj: count(3), rev: count(2), oos: count(1) }),
        (b, d) => {
          const build = (x: typeof b) => {
            const dO = Math.min(x.dOos, x.insp);
            const vO = Math.min(x.vOos, x.insp);
            const rate = (o: number) => (x.insp >= 3 ? Math.round((10000 * o) / x.insp) / 100 : null);
            const crashes = Math.max(x.crashes, x.fatal, x.inj);
            return cleanCarrier({
              inspections_24m: x.insp,
              driver_inspections_24m: x.insp,
              vehicle_inspections_24m: x.insp,
              driver_oos_24m: dO,
              vehicle_oos_24m: vO,
              driver_oos_rate: rate(dO),
              vehicle_oos_rate: rate(vO),
              crashes_24m: crashes,
              fatal_crashes_24m: x.fatal,
              injury_crashes_24m: x.inj,
              crashes_per_power_unit: Math.round((crashes / x.pu) * 10000) / 10000,
              power_units: x.pu,
              revocations_total: x.rev,
              revocations_recent: x.rev,
              oos_orders_active: x.oos,
              oos_orders_total: x.oos,
            });
          };
          const more = {
            ...b,
            dOos: b.dOos + d.dOos,
            vOos: b.vOos + d.vOos,
            crashes: b.crashes + d.crashes,
            fatal: b.fatal + d.fatal,
            inj: b.inj + d.inj,
            rev: b.rev + d.rev,
            oos: b.oos + d.oos,
          };
          expect(assessCarrier(build(more)).risk_score).toBeGreaterThanOrEqual(assessCarrier(build(b)).risk_score);
        },
      ),
      { numRuns: 500, seed: 42 },
    );
  });
});

describe('riskScoreSelectSql', () => {
  it('gives the same score, level, recommendation and flags as assessCarrier (one definition)', async () => {
    const carriers = [
      cleanCarrier(),
      ...Object.values(TRIGGERS).map((t) => cleanCarrier(t)),
      cleanCarrier({ ...TRIGGERS.OOS_ORDER_ACTIVE, ...TRIGGERS.FATAL_CRASH, ...TRIGGERS.CHAMELEON_LINK }),
    ];
    fc.sample(fc.record({ a: count(3), b: count(40), c: fc.boolean(), d: fc.option(fc.constantFrom('S', 'C', 'U'), { nil: null }) }), {
      numRuns: 60,
      seed: 7,
    }).forEach((r, i) => {
      carriers.push(
        cleanCarrier({
          dot_number: 2_000_000 + i,
          revocations_total: r.a,
          revocations_recent: r.a > 1 ? 1 : 0,
          driver_oos_rate: r.b,
          vehicle_oos_rate: r.b * 1.5,
          prior_revoke_flag: r.c,
          safety_rating: r.d,
          power_units: r.a,
          crashes_24m: r.a,
          crashes_per_power_unit: r.a ? 1 : null,
        }),
      );
    });
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const flat = carriers.map((c, i) => {
      const { basics, ...rest } = c;
      const row: Record<string, unknown> = { ...rest, dot_number: i + 1 };
      for (const [k, v] of Object.entries(basics))
        Object.assign(row, {
          [`${k}_measure`]: v.measure,
          [`${k}_pct`]: v.percentile,
          [`${k}_alert`]: v.alert,
          [`${k}_ac`]: v.acute_critical,
        });
      return row;
    });
    await conn.run(
      `CREATE TABLE f AS SELECT * FROM read_json('${await writeTemp(JSON.stringify(flat))}', format = 'array', columns = ${columnsSpec(flat[0])})`,
    );
    const rows = (
      await conn.runAndReadAll(
        `SELECT * FROM (${riskScoreSelectSql(`(SELECT *, (${basicsOverThresholdSql()})::INTEGER AS bot FROM f)`)}) ORDER BY dot_number`,
      )
    ).getRowObjectsJson();
    conn.closeSync();
    rows.forEach((r, i) => {
      const a = assessCarrier(carriers[i]);
      expect({ score: r.risk_score, level: r.risk_level, rec: r.recommendation, flags: r.red_flag_codes }).toEqual({
        score: a.risk_score,
        level: a.risk_level,
        rec: a.recommendation,
        flags: a.red_flags.map((f) => f.code),
      });
      expect(r.bot).toBe(a.basics.filter((b) => b.exceeded).length);
    });
  });
});

async function writeTemp(text: string): Promise<string> {
  const { mkdtemp, writeFile } = await import('node:fs/promises');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fmcsa-risk-'));
  const file = path.join(dir, 'f.json');
  await writeFile(file, text);
  return file;
}

function columnsSpec(row: Record<string, unknown>): string {
  const types: Record<string, string> = {};
  for (const k of Object.keys(row)) {
    if (['legal_name', 'phy_state', 'status_code', 'carrier_class', 'authority_status', 'safety_rating'].includes(k)) types[k] = 'VARCHAR';
    else if (k === 'prior_revoke_flag' || k.endsWith('_alert') || k.endsWith('_ac')) types[k] = 'BOOLEAN';
    else types[k] = 'DOUBLE';
  }
  return `{${Object.entries(types)
    .map(([k, t]) => `'${k}': '${t}'`)
    .join(', ')}}`;
}
