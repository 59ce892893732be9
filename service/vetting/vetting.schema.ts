/**
 * The vetting record's shape, one source for the type and the check (issue 17: types inferred from zod, no
 * hand-written twin). Spec 001 (`001_2c993ec8aa6fda8f.txt`, "Vetting record") fixes `carrier` (string, the
 * carrier's name), `red_flags` (array of string) and `basics` (object of numeric scores keyed by snake_case
 * category); the richer data sits beside each in a `*_detail` field, never in its place.
 */
import { z } from 'zod';

const RiskLevelSchema = z.enum(['LOW', 'MODERATE', 'HIGH', 'CRITICAL']);
const RecommendationSchema = z.enum(['APPROVE', 'CAUTION', 'REJECT']);

/** The census and authority facts a vetting record names (`carrier_detail`). */
export const CarrierSummarySchema = z.object({
  dot_number: z.number().int(),
  legal_name: z.string().nullable(),
  phy_state: z.string().nullable(),
  status_code: z.string().nullable(),
  authority_status: z.string().nullable(),
  safety_rating: z.string().nullable(),
  carrier_class: z.string(),
  power_units: z.number().nullable(),
  drivers: z.number().nullable(),
  allowed_to_operate: z.string().nullable(),
});
export type CarrierSummary = z.infer<typeof CarrierSummarySchema>;

/** Whether the features were refreshed from FMCSA's live API (QCMobile) before scoring, and why not. */
export const LiveRefreshOutcomeSchema = z.object({
  status: z.enum(['not_configured', 'refreshed', 'fallback']),
  attempted_at: z.string().nullable(),
  reason: z.string().nullable(),
});
export type LiveRefreshOutcome = z.infer<typeof LiveRefreshOutcomeSchema>;

/** One red flag of the risk model (`red_flags_detail`). */
export const RedFlagDetailSchema = z.object({
  code: z.string(),
  severity: z.enum(['critical', 'high', 'medium', 'low']),
  message: z.string(),
});

/** One BASIC of `basics_detail`: the risk model's result with its contract category key. */
export const BasicDetailSchema = z.object({
  category: z.string(),
  basic: z.string(),
  measure: z.number().nullable(),
  percentile: z.number().nullable(),
  threshold: z.number(),
  exceeded: z.boolean(),
  alert: z.boolean().nullable(),
});

/** The signed vetting record (what `signature` covers). */
export const VettingRecordSchema = z.object({
  vetting_id: z.string().nullable(),
  dot_number: z.number().int(),
  broker_id: z.string().nullable(),
  /** The carrier's legal name (`USDOT <n>` when the census gives none). */
  carrier: z.string(),
  carrier_detail: CarrierSummarySchema,
  risk_score: z.number(),
  risk_level: RiskLevelSchema,
  recommendation: RecommendationSchema,
  /** One readable sentence per red flag (the `message` of `red_flags_detail`), empty when there are none. */
  red_flags: z.array(z.string()),
  red_flags_detail: z.array(RedFlagDetailSchema),
  /** The SMS measure of each BASIC, keyed by category; BASICs without a published measure are left out. */
  basics: z.record(z.string(), z.number()),
  /** All seven BASICs: category, FMCSA name, measure, percentile, threshold, exceeded, alert. */
  basics_detail: z.array(BasicDetailSchema),
  model_version: z.string(),
  data_hash: z.string().regex(/^[a-f0-9]{64}$/),
  vetting_date: z.string(),
  live_refresh: LiveRefreshOutcomeSchema,
  snapshot_available: z.boolean(),
});
export type VettingRecord = z.infer<typeof VettingRecordSchema>;

/** A vetting record with its Ed25519 signature over the RFC 8785 JSON of the record. */
export const SignedVettingSchema = VettingRecordSchema.extend({
  signature: z.object({ alg: z.literal('Ed25519'), key_id: z.string(), value: z.string() }),
});
export type SignedVetting = z.infer<typeof SignedVettingSchema>;

// Answer schemas of the vetting routes (OpenAPI components, checked live by test/api/openapi-conformance.test.ts).

const PLAN_IDS = ['free', 'payg', 'pack_100', 'pack_500', 'enterprise'] as const;

/** The paying account after a vetting (vetting.queries.ts CreditsView): balance null on an unlimited plan. */
export const CreditsViewSchema = z.object({
  account_id: z.string(),
  plan: z.enum(PLAN_IDS),
  balance: z.number().int().nullable(),
  charged: z.number().int(),
});

/** POST /api/vet: the signed record, the paying account, and `watchlist` only when auto_watch added the carrier. */
export const vetAnswer = SignedVettingSchema.extend({
  credits: CreditsViewSchema,
  watchlist: z
    .object({ added: z.literal(true) })
    .optional()
    .describe('present when auto_watch added the carrier'),
});

/** POST /api/vet-preview: the same computation, unsigned, not stored (no vetting_id). */
export const vetPreviewAnswer = VettingRecordSchema.extend({ preview: z.literal(true), snapshot_json: z.string() });

/** GET /api/vetting: ?dot= a page of the carrier's history; ?id= one record with the snapshot it was computed from. */
export const vettingLookupAnswer = z.union([
  z.object({
    dot_number: z.number().int(),
    count: z.number().int(),
    records: z.array(SignedVettingSchema),
    limit: z.number().int(),
    limit_clamped: z.object({ requested: z.number(), max: z.number() }).optional(),
    next_cursor: z.string().nullable(),
    next: z.string().nullable(),
  }),
  SignedVettingSchema.extend({ snapshot_json: z.string() }),
]);

export const batchVetAnswer = z.object({
  broker_id: z.string().nullable(),
  requested: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
  results: z.array(
    z.union([
      z.object({ dot_number: z.union([z.string(), z.number()]), status: z.literal('ok'), record: SignedVettingSchema }),
      z.object({
        dot_number: z.union([z.string(), z.number()]),
        status: z.literal('error'),
        http_status: z.number().int(),
        error: z.string(),
      }),
    ]),
  ),
  credits: CreditsViewSchema,
});

export const plansAnswer = z.object({
  currency: z.literal('USD'),
  rules: z.array(z.string()),
  plans: z.array(
    z.object({
      plan: z.enum(PLAN_IDS),
      label: z.string(),
      price: z.string(),
      price_usd: z.number().nullable(),
      usd_per_credit: z.number().nullable(),
      lookups: z.literal('unlimited'),
      vettings: z.string(),
      purchase_credits: z.object({ min: z.number().int(), max: z.number().int() }).nullable(),
      batch_limit: z.number().int().nullable(),
    }),
  ),
});

const AccountSchema = z.object({ account_id: z.string(), plan: z.enum(PLAN_IDS), balance: z.number().int(), created_at: z.string() });

/** POST /admin/credits: grant → {granted, account}; key → {account_id, api_key, ..., note}; show → {account}. */
export const creditsCommandAnswer = z.union([
  z.object({ granted: z.number().int(), account: AccountSchema }),
  z.object({ account_id: z.string(), api_key: z.string(), key_id: z.string(), note: z.string() }),
  z.object({ account: AccountSchema }),
]);
