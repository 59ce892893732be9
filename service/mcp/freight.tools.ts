/**
 * The 12 freight tools, named and parameterised exactly as the MCP table of
 * the vetting specification (../shared/spec/001_…, "MCP"): `dot_number`,
 * `mc_number`, `name` on lookup; `dot_number` on the histories (optional
 * `limit` on crash and inspection history); `dot_number` or `vetting_id` on
 * vetting history; `state`, `min_risk`, `safety_rating` on red-flag search;
 * `broker_id` optional on freight_carrier_vet. Arguments are strict: an
 * unknown one is a tool error, never silently ignored. Each `run` calls the
 * same transport-free query function as the REST route.
 */
import { z } from 'zod';
import { InvalidInputError, SourceUnavailableError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { getAttestation, getStatus } from '../attestation/attestation.queries.ts';
import { createVetting, getVettingHistory, getVettingRecord, previewVetting, vettingDepsOf } from '../vetting/vetting.queries.ts';
import { signingKeyOf, stateOf } from '../platform/guards.ts';
import * as carriers from '../carriers/carriers.queries.ts';
import { bool, int, num, obj, READ_ONLY, row, str, type ToolDef } from './tool-kit.ts';

// Input schemas stay transform-free so they convert to JSON Schema as accepted input.
/** The `cursor` argument of every paged tool (platform/pagination.ts): `next_cursor` of the previous call. */
const pageCursor = z.string().max(200).optional().describe('next_cursor of the previous page (opaque)');
const nextCursorOut = str.optional().describe('cursor of the next page; absent on the last page');

const dotNumber = z
  .union([
    z.number().int().positive().max(99_999_999),
    z
      .string()
      .trim()
      .regex(/^\d{1,8}$/, 'must be a USDOT number (digits)'),
  ])
  .describe('USDOT number of the carrier (a number, or a string of digits)');
const toDot = (v: number | string) => Number(v);
const stateArg = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{2}$/, 'must be a 2-letter state code')
  .describe('2-letter physical state (e.g. TX)');
const RISK_LEVELS = ['LOW', 'MODERATE', 'HIGH', 'CRITICAL'] as const;
const RECOMMENDATIONS = ['APPROVE', 'CAUTION', 'REJECT'] as const;

const flag = obj({ code: str, severity: str, message: str });
const signature = obj({ alg: z.literal('Ed25519'), key_id: str, value: str });
const nullable = <T extends z.ZodType>(t: T) => z.union([t, z.null()]);
/**
 * A signed vetting record travels verbatim (its signature covers its nulls). `carrier`, `red_flags` and
 * `basics` have the specification's types (spec 001: a name string, strings, an object of numeric scores);
 * the richer forms travel beside them (`carrier_detail`, `red_flags_detail`, `basics_detail`), and a record
 * stored before those types carries its signed form in `signed_record`.
 */
const vettingRecord = obj({
  vetting_id: nullable(str),
  dot_number: int,
  broker_id: nullable(str),
  carrier: str,
  carrier_detail: obj({ legal_name: nullable(str) }),
  risk_score: num,
  risk_level: z.enum(RISK_LEVELS),
  recommendation: z.enum(RECOMMENDATIONS),
  red_flags: z.array(str),
  red_flags_detail: z.array(flag),
  basics: z.record(z.string(), num),
  basics_detail: z.array(row),
  model_version: str,
  data_hash: str,
  vetting_date: str,
  snapshot_available: bool,
  signature,
});

function fmcsa(deps: ServiceDeps) {
  const r = deps.readers.fmcsa;
  if (!r) throw new SourceUnavailableError('the fmcsa domain is not served by this instance');
  return r;
}
const asRecord = (v: unknown) => v as Record<string, unknown>;

export const FREIGHT_TOOLS: ToolDef[] = [
  {
    name: 'freight_carrier_lookup',
    title: 'Carrier lookup',
    description:
      'Find motor carriers in the FMCSA census by USDOT number, MC docket number or name (optionally in one state); ranked carrier profiles. Same as GET /api/carriers.',
    input: z
      .strictObject({
        dot_number: dotNumber.optional(),
        mc_number: z
          .string()
          .trim()
          .regex(/^(MC-?)?\d{1,8}$/i, 'must be an MC number like MC123456')
          .optional()
          .describe('MC docket number (MC123456 or 123456)'),
        name: z.string().trim().min(2).max(120).optional().describe('legal or DBA name, or words of it'),
        state: stateArg.optional(),
        limit: z.number().int().min(1).max(100).optional().describe('carriers to return (default 20, max 100)'),
        offset: z.number().int().min(0).max(10_000).optional().describe('carriers to skip, for paging (default 0)'),
        cursor: pageCursor,
      })
      .refine(
        (a) => a.dot_number !== undefined || a.mc_number || a.name || a.state,
        'give dot_number, mc_number or name (state alone lists carriers of a state)',
      ),
    output: obj({
      total: int,
      limit: int,
      offset: int,
      results: z.array(obj({ dot_number: int, legal_name: str.optional() })),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) =>
      asRecord(
        await carriers.searchCarriers(fmcsa(deps), {
          name: a.name,
          dot: a.dot_number === undefined ? undefined : toDot(a.dot_number),
          mc: a.mc_number,
          state: a.state?.toUpperCase(),
          limit: a.limit,
          offset: a.offset,
          cursor: a.cursor,
        }),
      ),
  },
  {
    name: 'freight_carrier_safety',
    title: 'Carrier safety (BASICs)',
    description:
      'The seven SMS BASIC scores of a carrier with measures, percentiles where public, intervention thresholds and threshold flags. Same as GET /api/safety.',
    input: z.strictObject({ dot_number: dotNumber }),
    output: obj({
      dot_number: int,
      legal_name: str.optional(),
      carrier_class: str.optional(),
      safety_rating: str.optional(),
      sms_data_available: bool,
      basics: z.array(obj({ basic: str })),
      basics_over_threshold: int.optional(),
      as_of: str.optional(),
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) => asRecord(await carriers.getCarrierSafety(fmcsa(deps), toDot(a.dot_number))),
  },
  {
    name: 'freight_carrier_vet',
    title: 'Vet a carrier (creates a signed record; costs 1 credit)',
    description:
      "Creates a signed, timestamped, reproducible vetting record for a carrier: risk score, level, recommendation (APPROVE, CAUTION, REJECT), red flags and the SHA-256 data_hash of the stored snapshot. Costs 1 credit per call, from the API key's account (Authorization: Bearer plc_...) or else from broker_id's free account (30 credits at signup). Each call makes a new record. Same as POST /api/vet.",
    input: z.strictObject({
      dot_number: dotNumber,
      broker_id: z
        .string()
        .trim()
        .min(1)
        .max(100)
        .regex(/^[\w.@:-]+$/, 'letters, digits and . _ @ : - only')
        .optional()
        .describe('your company identifier; stored on the record, and its free account pays when no API key is sent'),
    }),
    output: vettingRecord.extend({
      credits: obj({ account_id: str, plan: str, balance: nullable(int), charged: int }),
    }),
    // Writes a new record and spends a credit, deletes nothing; repeating it makes another record (not idempotent).
    // Open world: with FMCSA_WEBKEY set it refreshes the carrier from FMCSA's live QCMobile API first.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    meter: 'vetting',
    run: async (ctx, a) => {
      const { record, credits } = await createVetting(await vettingDepsOf(ctx.deps), toDot(a.dot_number), {
        brokerId: a.broker_id ?? null,
        apiKey: ctx.apiKey,
      });
      return { ...record, credits };
    },
  },
  {
    name: 'freight_crash_history',
    title: 'Crash history',
    description: 'Crash records of a carrier, newest first, with fatality, injury and tow-away counts. Same as GET /api/crashes?dot=.',
    input: z.strictObject({
      dot_number: dotNumber,
      limit: z.number().int().min(1).max(500).optional().describe('newest crashes to list (counts always cover every crash)'),
      cursor: pageCursor,
    }),
    output: obj({
      dot_number: int,
      data_available: bool,
      message: str.optional(),
      total_crashes: int,
      fatal: int,
      injury: int,
      tow_away: int,
      limit: int.optional(),
      returned_crashes: int.optional(),
      vehicles: z.array(row),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) =>
      asRecord(await carriers.getCrashes(fmcsa(deps), { dot: toDot(a.dot_number), limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'freight_inspection_history',
    title: 'Inspection history',
    description:
      'Roadside inspections of a carrier, newest first, with violations and driver, vehicle and hazmat out-of-service rates against national averages. Same as GET /api/inspections.',
    input: z.strictObject({
      dot_number: dotNumber,
      limit: z.number().int().min(1).max(100).optional().describe('newest inspections to list (default and max 100)'),
      cursor: pageCursor,
    }),
    output: obj({
      dot_number: int,
      data_available: bool,
      window: str,
      total_inspections_on_file: int,
      rates: z.record(z.string(), obj({ inspections: num.optional(), national_average: num })),
      inspections: z.array(row),
      violations: z.array(row),
      units: z.array(row),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) =>
      asRecord(await carriers.getInspections(fmcsa(deps), toDot(a.dot_number), { limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'freight_enforcement_history',
    title: 'Enforcement history',
    description:
      'Enforcement cases, revocations and out-of-service orders of a carrier; says plainly when a dataset has no data. Same as GET /api/enforcement.',
    input: z.strictObject({ dot_number: dotNumber }),
    output: obj({
      dot_number: int,
      oos_orders: obj({ data_available: bool, records: z.array(row), active: int }),
      enforcement_cases: obj({ data_available: bool, records: z.array(row) }),
      revocations: obj({ data_available: bool, records: z.array(row) }),
      data_available: bool,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) => asRecord(await carriers.getEnforcement(fmcsa(deps), toDot(a.dot_number))),
  },
  {
    name: 'freight_vetting_history',
    title: 'Vetting history',
    description:
      "Past vetting records: a carrier's, newest first (give dot_number), or one record with its stored snapshot_json (give vetting_id). Same as GET /api/vetting.",
    input: z
      .strictObject({
        dot_number: dotNumber.optional(),
        vetting_id: z
          .string()
          .regex(/^VET-[A-Za-z0-9-]+$/, 'must be a VET-... id')
          .optional()
          .describe('a vetting record id (VET-...)'),
        limit: z.number().int().min(1).max(200).optional().describe('records to return with dot_number (default 20, max 200)'),
        cursor: pageCursor,
      })
      .refine((a) => (a.dot_number === undefined) !== (a.vetting_id === undefined), 'give exactly one of dot_number or vetting_id'),
    output: obj({
      dot_number: int.optional(),
      count: int,
      records: z.array(vettingRecord.extend({ snapshot_json: str.optional() })),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) => {
      if (a.vetting_id) return { count: 1, records: [await getVettingRecord(stateOf(deps), a.vetting_id)] };
      return asRecord(await getVettingHistory(stateOf(deps), toDot(a.dot_number), a.limit ?? 20, a.cursor));
    },
  },
  {
    name: 'freight_compare_carriers',
    title: 'Compare carriers',
    description:
      'Side-by-side risk assessment of 2 to 10 carriers (the vetting computation, without storing records or spending credits), lowest risk first.',
    input: z.strictObject({
      dot_numbers: z.array(dotNumber).min(2).max(10).describe('2 to 10 USDOT numbers'),
    }),
    output: obj({
      count: int,
      carriers: z.array(
        obj({
          dot_number: int,
          legal_name: str.optional(),
          risk_score: num.optional(),
          risk_level: z.enum(RISK_LEVELS).optional(),
          recommendation: z.enum(RECOMMENDATIONS).optional(),
          red_flags: z.array(str),
          data_hash: str.optional(),
          error: str.optional(),
        }),
      ),
      lowest_risk_dot: int.optional(),
    }),
    // Reads only; with FMCSA_WEBKEY set each preview refreshes the carrier from FMCSA's live API (open world).
    annotations: { ...READ_ONLY, openWorldHint: true },
    meter: 'lookup',
    run: async ({ deps }, a) => {
      const vd = await vettingDepsOf(deps);
      const dots = [...new Set((a.dot_numbers as Array<number | string>).map(toDot))];
      if (dots.length < 2) throw new InvalidInputError('give at least two different DOT numbers');
      const list = await Promise.all(
        dots.map(async (d) => {
          try {
            const p = await previewVetting(vd, d);
            return {
              dot_number: d,
              legal_name: p.carrier_detail.legal_name,
              risk_score: p.risk_score as number | null,
              risk_level: p.risk_level,
              recommendation: p.recommendation,
              red_flags: p.red_flags,
              data_hash: p.data_hash,
              error: null,
            };
          } catch (e) {
            return { dot_number: d, risk_score: null, red_flags: [], error: (e as Error).message };
          }
        }),
      );
      list.sort((x, y) => (x.risk_score ?? Infinity) - (y.risk_score ?? Infinity) || x.dot_number - y.dot_number);
      return { count: list.length, carriers: list, lowest_risk_dot: list[0]?.risk_score === null ? null : list[0]!.dot_number };
    },
  },
  {
    name: 'freight_red_flag_search',
    title: 'Red flag search',
    description:
      'High-risk carriers matching criteria: state, minimum risk (score or level), safety rating and a red-flag code, highest risk first. Same as GET /api/red-flags.',
    input: z.strictObject({
      state: stateArg.optional(),
      min_risk: z
        .union([z.number().min(0).max(100), z.enum(RISK_LEVELS)])
        .optional()
        .describe('minimum risk: a risk_score 0-100, or a level (LOW, MODERATE, HIGH, CRITICAL)'),
      safety_rating: z
        .enum(carriers.SAFETY_RATINGS)
        .optional()
        .describe('FMCSA safety rating on the census: S satisfactory, C conditional, U unsatisfactory'),
      code: z
        .enum(carriers.RED_FLAG_CODES as [string, ...string[]])
        .optional()
        .describe('only carriers carrying this red flag (a risk-model rule code; see proofline://risk-model/rules)'),
      limit: z.number().int().min(1).max(500).optional().describe('carriers to return (default 50, max 500)'),
      cursor: pageCursor,
    }),
    output: obj({
      code: str.optional(),
      state: str.optional(),
      min_risk: num.optional(),
      safety_rating: str.optional(),
      total: int,
      limit: int,
      results: z.array(
        obj({
          dot_number: int,
          legal_name: str.optional(),
          risk_score: num,
          risk_level: z.enum(RISK_LEVELS),
          recommendation: z.enum(RECOMMENDATIONS),
          red_flag_codes: z.array(str),
        }),
      ),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) =>
      asRecord(
        await carriers.searchRedFlags(fmcsa(deps), {
          code: a.code,
          state: a.state?.toUpperCase(),
          min_risk: a.min_risk,
          safety_rating: a.safety_rating,
          limit: a.limit,
          cursor: a.cursor,
        }),
      ),
  },
  {
    name: 'freight_crash_by_vin',
    title: 'Crashes by VIN',
    description: 'Vehicle-level crash lookup: the crash history of one vehicle by its VIN. Same as GET /api/crashes?vin=.',
    input: z.strictObject({
      vin: z
        .string()
        .trim()
        .regex(/^[A-HJ-NPR-Z0-9]{11,17}$/i, 'must be a VIN (11-17 letters and digits, no I, O or Q)')
        .describe('vehicle identification number (11 to 17 characters, no I, O or Q)'),
      limit: z.number().int().min(1).max(500).optional().describe('newest crashes to list (counts always cover every crash)'),
      cursor: pageCursor,
    }),
    output: obj({
      vin: str,
      data_available: bool,
      total_crashes: int,
      fatal: int,
      injury: int,
      tow_away: int,
      vehicles: z.array(row),
      next_cursor: nextCursorOut,
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }, a) =>
      asRecord(await carriers.getCrashes(fmcsa(deps), { vin: a.vin.toUpperCase(), limit: a.limit, cursor: a.cursor })),
  },
  {
    name: 'freight_status',
    title: 'Data status',
    description: 'Record counts per dataset and table, dataset as-of dates, database and model versions. Same as GET /api/status.',
    input: z.strictObject({}),
    output: obj({
      status: str,
      generated_at: str,
      database_version: obj({}),
      // Absent before the first FMCSA snapshot (status `no_data`; GET /api/status says null, and MCP answers omit nulls).
      datasets: z.union([z.array(row), row]).optional(),
      tables: z.array(obj({ table: str })),
      domains: z.array(row),
      state: row.optional(),
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }) => asRecord(await getStatus(deps.readers, deps.state, deps.options.version, deps.now())),
  },
  {
    name: 'freight_attestation',
    title: 'Data attestation',
    description:
      'Signed root hash over the FMCSA table hashes, each table hash, and the data provenance chain from source files to tables. Same as GET /api/attestation.',
    input: z.strictObject({}),
    output: obj({
      domain: str,
      snapshot_id: str,
      published_at: str,
      input_digest: nullable(str),
      root_hash: str,
      root_algorithm: str,
      tables: z.array(row),
      provenance: z.array(row),
      signature: nullable(signature),
    }),
    annotations: READ_ONLY,
    meter: 'lookup',
    run: async ({ deps }) => asRecord(await getAttestation(deps.readers.fmcsa, await signingKeyOf(deps))),
  },
];
