/**
 * The 12 MCP tools. Each is `{name, description, input, output, run}` with zod
 * input AND output schemas; `run` calls the same transport-free query
 * functions as the REST routes (carriers family, vetting, attestation).
 * Argument and lookup failures become tool errors (`isError: true`) with a
 * readable message (mcp.server.ts).
 */
import { z } from 'zod';
import { InvalidInputError, SourceUnavailableError } from '../../lib/errors.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { getAttestation, getStatus } from '../attestation/attestation.queries.ts';
import { createVetting, getVettingHistory, getVettingRecord, previewVetting, vettingDepsOf } from '../vetting/vetting.queries.ts';
import { signingKeyOf, stateOf } from '../platform/guards.ts';
import * as carriers from '../carriers/carriers.queries.ts';
import { MONITORING_TOOLS } from './monitoring.tools.ts';

export interface ToolContext {
  deps: ServiceDeps;
  /** Credit API key from the /mcp request's Authorization header (plc_...), if any. */
  apiKey: string | null;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  /** MCP tool annotations (hints for clients: read-only, destructive, idempotent). */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  run(ctx: ToolContext, args: any): Promise<Record<string, unknown>>;
}

// Input schemas stay transform-free so they convert to JSON Schema as accepted input.
const dot = z
  .union([
    z.number().int().positive().max(99_999_999),
    z
      .string()
      .trim()
      .regex(/^\d{1,8}$/, 'must be a USDOT number (digits)'),
  ])
  .describe('USDOT number (number or digit string)');
const toDot = (v: number | string) => Number(v);
const anyObject = z.record(z.string(), z.unknown());
const resultsOutput = z.object({ count: z.number().int(), results: z.array(z.unknown()) }).loose();
const looseOutput = z.object({}).loose();
const flag = z.object({ code: z.string(), severity: z.string(), message: z.string() });
const signature = z.object({ alg: z.literal('Ed25519'), key_id: z.string(), value: z.string() });
const vettingRecord = z
  .object({
    vetting_id: z.string().nullable(),
    dot_number: z.number(),
    broker_id: z.string().nullable(),
    carrier: anyObject,
    risk_score: z.number(),
    risk_level: z.enum(['LOW', 'MODERATE', 'HIGH', 'CRITICAL']),
    recommendation: z.enum(['APPROVE', 'CAUTION', 'REJECT']),
    red_flags: z.array(flag),
    basics: z.array(anyObject),
    model_version: z.string(),
    data_hash: z.string(),
    vetting_date: z.string(),
    live_refresh: anyObject,
    snapshot_available: z.boolean(),
  })
  .loose();

function fmcsa(deps: ServiceDeps) {
  const r = deps.readers.fmcsa;
  if (!r) throw new SourceUnavailableError('the fmcsa domain is not served by this instance');
  return r;
}

/** Arrays become `{count, results}`; objects pass through. */
function asResults(v: unknown): Record<string, unknown> {
  if (Array.isArray(v)) return { count: v.length, results: v };
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.results) && typeof o.count !== 'number') return { ...o, count: o.results.length };
    return o;
  }
  return { count: 0, results: [] };
}
function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { results: v };
}

export const TOOLS: ToolDef[] = [
  {
    name: 'freight_carrier_lookup',
    title: 'Carrier lookup',
    description:
      'Find motor carriers in the FMCSA census by name, USDOT number, MC docket number or state; ranked and paginated (same as GET /api/carriers).',
    input: z
      .object({
        name: z.string().trim().min(2).max(120).optional().describe('legal or DBA name (words)'),
        dot: dot.optional(),
        mc: z
          .string()
          .trim()
          .regex(/^(MC-?)?\d{1,8}$/i, 'must be an MC number like MC123456')
          .optional(),
        state: z
          .string()
          .trim()
          .regex(/^[A-Za-z]{2}$/, 'must be a 2-letter state code')
          .optional(),
        limit: z.number().int().min(1).max(50).default(10),
        offset: z.number().int().min(0).max(10_000).default(0),
      })
      .refine((a) => a.name || a.dot || a.mc || a.state, 'give at least one of name, dot, mc, state'),
    output: resultsOutput,
    run: async ({ deps }, a) =>
      asResults(
        await carriers.searchCarriers(fmcsa(deps), {
          name: a.name,
          dot: a.dot === undefined ? undefined : toDot(a.dot),
          mc: a.mc,
          state: a.state?.toUpperCase(),
          limit: a.limit,
          offset: a.offset,
        }),
      ),
  },
  {
    name: 'freight_carrier_safety',
    title: 'Carrier safety (BASICs)',
    description:
      'The seven SMS BASICs of a carrier with measures, public percentiles, intervention thresholds and alerts (same as GET /api/safety).',
    input: z.object({ dot }),
    output: looseOutput,
    run: async ({ deps }, a) => asObject(await carriers.getCarrierSafety(fmcsa(deps), toDot(a.dot))),
  },
  {
    name: 'freight_carrier_vet',
    title: 'Vet a carrier (creates a record, 1 credit)',
    description:
      "Creates a signed, timestamped, reproducible vetting record for a carrier (risk score, level, recommendation, red flags, data_hash of the stored snapshot). Consumes one credit of the broker's account (or of the API key's account sent as Authorization: Bearer plc_...).",
    input: z.object({
      dot_number: dot,
      broker_id: z
        .string()
        .trim()
        .min(1)
        .max(100)
        .regex(/^[\w.@:-]+$/, 'letters, digits and . _ @ : - only')
        .describe('your broker id; its free account pays without an API key'),
    }),
    output: vettingRecord.extend({ signature, credits: anyObject }),
    run: async (ctx, a) => {
      const { record, credits } = await createVetting(await vettingDepsOf(ctx.deps), toDot(a.dot_number), {
        brokerId: a.broker_id,
        apiKey: ctx.apiKey,
      });
      return { ...record, credits };
    },
  },
  {
    name: 'freight_crash_history',
    title: 'Crash history',
    description: 'Crashes of a carrier with fatalities, injuries and tow-aways (same as GET /api/crashes?dot=).',
    input: z.object({ dot }),
    output: looseOutput,
    run: async ({ deps }, a) => asResults(await carriers.getCrashes(fmcsa(deps), { dot: toDot(a.dot) })),
  },
  {
    name: 'freight_inspection_history',
    title: 'Inspection history',
    description:
      'Roadside inspections and violations with driver, vehicle and hazmat out-of-service rates against national averages (same as GET /api/inspections).',
    input: z.object({ dot }),
    output: looseOutput,
    run: async ({ deps }, a) => asObject(await carriers.getInspections(fmcsa(deps), toDot(a.dot))),
  },
  {
    name: 'freight_enforcement_history',
    title: 'Enforcement history',
    description:
      'Enforcement cases, revocations and out-of-service orders of a carrier; says plainly when a dataset has no data (same as GET /api/enforcement).',
    input: z.object({ dot }),
    output: looseOutput,
    run: async ({ deps }, a) => asObject(await carriers.getEnforcement(fmcsa(deps), toDot(a.dot))),
  },
  {
    name: 'freight_vetting_history',
    title: 'Vetting history',
    description:
      "A carrier's vetting records, newest first (give dot), or one record with its stored snapshot_json (give vetting_id); same as GET /api/vetting.",
    input: z
      .object({
        dot: dot.optional(),
        vetting_id: z
          .string()
          .regex(/^VET-[A-Za-z0-9-]+$/, 'must be a VET-... id')
          .optional(),
        limit: z.number().int().min(1).max(200).default(20),
      })
      .refine((a) => (a.dot === undefined) !== (a.vetting_id === undefined), 'give exactly one of dot or vetting_id'),
    output: z.object({
      dot_number: z.number().optional(),
      count: z.number().int(),
      records: z.array(vettingRecord.extend({ signature, snapshot_json: z.string().optional() })),
    }),
    run: async ({ deps }, a) => {
      if (a.vetting_id) return { count: 1, records: [await getVettingRecord(stateOf(deps), a.vetting_id)] };
      return getVettingHistory(stateOf(deps), toDot(a.dot), a.limit) as unknown as Record<string, unknown>;
    },
  },
  {
    name: 'freight_compare_carriers',
    title: 'Compare carriers',
    description:
      'Side-by-side risk assessment of 2 to 10 carriers (the vetting computation without storing records or using credits), lowest risk first.',
    input: z.object({ dot_numbers: z.array(dot).min(2).max(10) }),
    output: z.object({
      count: z.number().int(),
      carriers: z.array(
        z.object({
          dot_number: z.number(),
          legal_name: z.string().nullable(),
          risk_score: z.number().nullable(),
          risk_level: z.string().nullable(),
          recommendation: z.string().nullable(),
          red_flags: z.array(flag),
          data_hash: z.string().nullable(),
          error: z.string().nullable(),
        }),
      ),
      lowest_risk_dot: z.number().nullable(),
    }),
    run: async ({ deps }, a) => {
      const vd = await vettingDepsOf(deps);
      const dots = [...new Set((a.dot_numbers as Array<number | string>).map(toDot))];
      if (dots.length < 2) throw new InvalidInputError('give at least two different DOT numbers');
      const carriers = await Promise.all(
        dots.map(async (d) => {
          try {
            const p = await previewVetting(vd, d);
            return {
              dot_number: d,
              legal_name: p.carrier.legal_name,
              risk_score: p.risk_score,
              risk_level: p.risk_level,
              recommendation: p.recommendation,
              red_flags: p.red_flags,
              data_hash: p.data_hash,
              error: null,
            };
          } catch (e) {
            return {
              dot_number: d,
              legal_name: null,
              risk_score: null,
              risk_level: null,
              recommendation: null,
              red_flags: [],
              data_hash: null,
              error: (e as Error).message,
            };
          }
        }),
      );
      carriers.sort((x, y) => (x.risk_score ?? Infinity) - (y.risk_score ?? Infinity) || x.dot_number - y.dot_number);
      return { count: carriers.length, carriers, lowest_risk_dot: carriers[0]?.risk_score === null ? null : carriers[0]!.dot_number };
    },
  },
  {
    name: 'freight_red_flag_search',
    title: 'Red flag search',
    description:
      'Carriers carrying a given risk red flag (e.g. an active out-of-service order, shared identifiers with revoked carriers), optionally in one state.',
    input: z.object({
      code: z
        .string()
        .trim()
        .regex(/^[A-Z0-9_]{2,64}$/, 'must be a red-flag code in CAPS_SNAKE_CASE')
        .optional(),
      state: z
        .string()
        .trim()
        .regex(/^[A-Za-z]{2}$/, 'must be a 2-letter state code')
        .optional(),
      limit: z.number().int().min(1).max(100).default(20),
    }),
    output: resultsOutput,
    run: async ({ deps }, a) =>
      asResults(await carriers.searchRedFlags(fmcsa(deps), { code: a.code, state: a.state?.toUpperCase(), limit: a.limit })),
  },
  {
    name: 'freight_crash_by_vin',
    title: 'Crashes by VIN',
    description: 'Crash history of one vehicle by its VIN (same as GET /api/crashes?vin=).',
    input: z.object({
      vin: z
        .string()
        .trim()
        .regex(/^[A-HJ-NPR-Z0-9]{11,17}$/i, 'must be a VIN (11-17 letters and digits, no I, O or Q)'),
    }),
    output: looseOutput,
    run: async ({ deps }, a) => asResults(await carriers.getCrashes(fmcsa(deps), { vin: a.vin.toUpperCase() })),
  },
  {
    name: 'freight_status',
    title: 'Data status',
    description: 'Record counts per dataset and table, dataset as-of dates, database and model versions (same as GET /api/status).',
    input: z.object({}),
    output: z.object({
      status: z.string(),
      generated_at: z.string(),
      database_version: anyObject,
      datasets: z.unknown(),
      tables: z.array(anyObject),
      domains: z.array(anyObject),
      state: anyObject.nullable(),
    }),
    run: async ({ deps }) => getStatus(deps.readers, deps.state, deps.options.version, deps.now()) as unknown as Record<string, unknown>,
  },
  {
    name: 'freight_attestation',
    title: 'Data attestation',
    description:
      'Signed root hash over the FMCSA table hashes, each table hash, and the provenance chain from source files to tables (same as GET /api/attestation).',
    input: z.object({}),
    output: z.object({
      domain: z.string(),
      snapshot_id: z.string(),
      published_at: z.string(),
      input_digest: z.string().nullable(),
      root_hash: z.string(),
      root_algorithm: z.string(),
      tables: z.array(anyObject),
      provenance: z.array(anyObject),
      signature: signature.nullable(),
    }),
    run: async ({ deps }) => getAttestation(deps.readers.fmcsa, await signingKeyOf(deps)) as unknown as Record<string, unknown>,
  },
  ...MONITORING_TOOLS, // carrier monitoring (service/mcp/monitoring.tools.ts)
];
