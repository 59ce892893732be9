/**
 * Vetting records: the per-load, timestamped, reproducible record of why a
 * carrier was chosen (Montgomery v. Caribe Transport II, 2026: a broker's
 * defence against negligent-selection claims). Transport-free: REST and MCP
 * both call these.
 *
 * Integrity: `snapshot_json` is the RFC 8785 canonical JSON of everything the
 * assessment used (every input with dataset, as-of date, retrieval time and
 * content hash; the features; the assessment; the live-refresh outcome), and
 * `data_hash` = SHA-256 of exactly those stored bytes, so anyone holding the
 * record can recompute it. The record itself is signed with the service's
 * Ed25519 key (canonical JSON of the record without `signature`).
 */
import { withMembers } from '../../lib/objects.ts';
import { decodeKeyCursor, encodeKeyCursor } from '../platform/pagination.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { signingKeyOf, stateOf } from '../platform/guards.ts';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InvalidInputError, NotFoundError, PipelineError, publicMessage, SourceUnavailableError } from '../../lib/errors.ts';
import { canonicalJson, canonicalJsonReusing, sha256Hex } from '../../lib/hash.ts';
import { type SigningKey, signCanonicalText } from '../../lib/keys.ts';
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';
import {
  assessCarrier,
  MIN_INSPECTIONS_FOR_RATE,
  type BasicResult,
  type CarrierFeatures,
  type RedFlag,
  type RiskAssessment,
} from '../../ingest/fmcsa/risk-model.ts';
import { insertRowsSql, loadStatements, queryCommitted, type StateStore, type StateTx } from '../platform/state.store.ts';
import {
  assertBatchSize,
  assertCanPay,
  debit,
  getAccount,
  freeAccountId,
  PLANS,
  resolveAccount,
  type Account,
  type PlanId,
} from './credits.ts';
import { overlayLiveCarrier, redactWebKey, type LiveRefresher } from './live-refresh.ts';
import { loadRiskSnapshot, type RiskSnapshotInput } from '../carriers/carriers.queries.ts';
import type { CarrierSummary, LiveRefreshOutcome, SignedVetting, VettingRecord } from './vetting.schema.ts';

/** What vetting needs from the service. */
export interface VettingDeps {
  fmcsa: SnapshotReader;
  store: StateStore;
  signingKey: SigningKey;
  live: LiveRefresher | null;
  now: () => Date;
}

/** A USDOT number as a JSON number or a string of digits. */
export const dotNumberSchema = z
  .union([
    z.number().int().positive().max(99_999_999),
    z
      .string()
      .trim()
      .regex(/^\d{1,8}$/, 'must be a USDOT number (digits)'),
  ])
  .transform((v) => Number(v))
  .refine((n) => n > 0, 'must be a positive USDOT number');

export const brokerIdSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[\w.@:-]+$/, 'letters, digits and . _ @ : - only');

export const vetInput = z.object({ dot_number: dotNumberSchema, broker_id: brokerIdSchema });
export const previewInput = z.object({ dot_number: dotNumberSchema, broker_id: brokerIdSchema.optional() });
export const batchVetInput = z.object({
  // No schema cap: the plan's batch limit applies (Enterprise: none, spec 001 Limits).
  dot_numbers: z.array(z.union([z.string(), z.number()])).min(1),
  broker_id: brokerIdSchema,
});

export interface ComputedVetting {
  record: VettingRecord;
  snapshot_json: string;
}

function summarise(f: CarrierFeatures, live: Record<string, unknown> | null): CarrierSummary {
  return {
    dot_number: f.dot_number,
    legal_name: f.legal_name,
    phy_state: f.phy_state,
    status_code: f.status_code,
    authority_status: f.authority_status,
    safety_rating: f.safety_rating,
    carrier_class: f.carrier_class,
    power_units: f.power_units,
    drivers: f.drivers,
    allowed_to_operate: typeof live?.allowedToOperate === 'string' ? live.allowedToOperate : null,
  };
}

/**
 * The vetting computation shared by /api/vet, /api/vet-preview, batch and MCP:
 * warehouse features (+ a live QCMobile overlay when configured; on failure
 * the fallback is recorded), the risk model, the canonical snapshot and its hash.
 */
export async function computeVetting(vd: VettingDeps, dot: number, brokerId: string | null): Promise<ComputedVetting> {
  // The one RiskSnapshot (carriers family): features, assessment, inputs and the carrier_risk row's origin leaf.
  const { snapshot: base, featuresJson, inputsJson } = await loadRiskSnapshot(vd.fmcsa, dot);
  let inputs: readonly RiskSnapshotInput[] = base.inputs;
  let features = base.features;
  let liveCarrier: Record<string, unknown> | null = null;
  let live: LiveRefreshOutcome = { status: 'not_configured', attempted_at: null, reason: null };
  if (vd.live) {
    const attempted_at = vd.now().toISOString();
    try {
      const r = await vd.live.fetchCarrier(dot);
      liveCarrier = r.carrier;
      features = overlayLiveCarrier(features, r.carrier, MIN_INSPECTIONS_FOR_RATE);
      inputs = [
        ...base.inputs,
        {
          dataset: 'qcmobile/carriers',
          as_of: r.as_of,
          retrieved_at: r.retrieved_at,
          content_sha256: r.content_sha256,
          source_url: r.source_url,
        },
      ];
      live = { status: 'refreshed', attempted_at, reason: null };
    } catch (e) {
      live = { status: 'fallback', attempted_at, reason: `${redactWebKey((e as Error).message)}; used the warehouse snapshot` };
    }
  }
  const assessment = live.status === 'refreshed' ? assessCarrier(features) : base.assessment;
  const vetting_date = vd.now().toISOString();
  const snapshot = {
    schema: 'proofline/vetting-snapshot@1',
    dot_number: dot,
    vetting_date,
    warehouse: {
      domain: 'fmcsa',
      snapshot_id: vd.fmcsa.manifest?.snapshot_id ?? null,
      published_at: vd.fmcsa.manifest?.published_at ?? null,
    },
    inputs,
    // The carrier_risk row's origin leaf (issue 25): data_hash → this snapshot → the leaf → the published parquet
    // file (content_sha256, the manifest's SHA-256 of tables/carrier_risk.parquet). docs/provenance.md.
    carrier_risk_origin: base.origin,
    // The features the leaf's record_sha256 covers, when a live refresh changed them.
    ...(live.status === 'refreshed' ? { warehouse_features: base.features } : {}),
    live_refresh: live,
    live_carrier: liveCarrier,
    features,
    assessment,
  };
  // The warehouse features were canonicalized for the origin leaf's record_sha256, and the snapshot's inputs once
  // per snapshot: spliced, not serialized again (a live refresh's inputs are a new array, serialized here).
  const snapshot_json = canonicalJsonReusing(
    snapshot,
    new Map<object, string>([
      [base.features, featuresJson],
      [base.inputs, inputsJson],
    ]),
  );
  const contract = contractFields(dot, summarise(features, liveCarrier), assessment);
  const record: VettingRecord = {
    vetting_id: null,
    dot_number: dot,
    broker_id: brokerId,
    carrier: contract.carrier,
    carrier_detail: contract.carrier_detail,
    risk_score: assessment.risk_score,
    risk_level: assessment.risk_level,
    recommendation: assessment.recommendation,
    red_flags: contract.red_flags,
    red_flags_detail: contract.red_flags_detail,
    basics: contract.basics,
    basics_detail: contract.basics_detail,
    model_version: assessment.model_version,
    data_hash: sha256Hex(snapshot_json),
    vetting_date,
    live_refresh: live,
    snapshot_available: false,
  };
  return { record, snapshot_json };
}

/** `Hours-of-Service Compliance` → `hours_of_service_compliance`: the FMCSA BASIC name, snake_cased (spec 001: `unsafe_driving`, `crash_indicator`). */
export function basicCategory(basic: string): string {
  return basic
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** The contract fields of a vetting record (spec 001 types) and their detail companions. */
export function contractFields(
  dot: number,
  carrier: CarrierSummary,
  a: Pick<RiskAssessment, 'red_flags' | 'basics'>,
): Pick<VettingRecord, 'carrier' | 'carrier_detail' | 'red_flags' | 'red_flags_detail' | 'basics' | 'basics_detail'> {
  const basics_detail = a.basics.map((b) => ({ category: basicCategory(b.basic), ...b }));
  const basics: Record<string, number> = {};
  for (const b of basics_detail) if (typeof b.measure === 'number' && Number.isFinite(b.measure)) basics[b.category] = b.measure;
  return {
    carrier: carrier.legal_name?.trim() || `USDOT ${dot}`,
    carrier_detail: carrier,
    red_flags: a.red_flags.map((f) => f.message),
    red_flags_detail: a.red_flags,
    basics,
    basics_detail,
  };
}

function newVettingId(now: Date): string {
  return `VET-${now.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(6).toString('hex').toUpperCase()}`;
}

/** The signed record and the canonical JSON its signature covers (stored as `record_json`: canonicalized once). */
function sign(vd: VettingDeps, record: VettingRecord): { signed: SignedVetting; recordJson: string } {
  const recordJson = canonicalJson(record);
  const signature = { alg: 'Ed25519' as const, key_id: vd.signingKey.keyId, value: signCanonicalText(vd.signingKey, recordJson) };
  return { signed: { ...record, signature }, recordJson };
}

/** Preview: the same computation, no record stored, no credit used. */
export async function previewVetting(vd: VettingDeps, dot: number): Promise<VettingRecord & { preview: true; snapshot_json: string }> {
  const c = await computeVetting(vd, dot, null);
  return { preview: true, ...c.record, snapshot_json: c.snapshot_json };
}

/** One plan of the published price list (GET /api/plans, /docs/rules#vetting-plans). */
export interface PublishedPlan {
  plan: PlanId;
  label: string;
  price: string;
  price_usd: number | null;
  usd_per_credit: number | null;
  lookups: 'unlimited';
  vettings: string;
  purchase_credits: { min: number; max: number } | null;
  batch_limit: number | null;
}

/** The plans and prices of spec 001's Limits table, as served at GET /api/plans and on /docs. */
export function listPlans(): {
  currency: 'USD';
  rules: string[];
  plans: PublishedPlan[];
} {
  const vettings: Record<PlanId, string> = {
    free: '30 credits granted at signup',
    payg: 'buy 1 to 99 credits',
    pack_100: '100 credits',
    pack_500: '500 credits',
    enterprise: 'volume pricing, unlimited credits',
  };
  return {
    currency: 'USD',
    rules: [
      'There are no subscriptions or monthly fees.',
      'Each vetting record consumes one credit; previews, lookups and history are free.',
      'Credits never expire.',
    ],
    plans: (Object.keys(PLANS) as PlanId[]).map((id) => {
      const p = PLANS[id];
      return {
        plan: id,
        label: p.label,
        price: p.price,
        price_usd: p.price_usd,
        usd_per_credit: p.usd_per_credit,
        lookups: 'unlimited',
        vettings: vettings[id],
        purchase_credits: p.purchase ? { ...p.purchase } : null,
        batch_limit: p.batch_limit,
      };
    }),
  };
}

export interface Auth {
  /** The requesting broker; optional when an API key names the paying account (MCP `freight_carrier_vet`, spec 001). */
  brokerId: string | null;
  apiKey?: string | null;
}

export interface CreditsView {
  account_id: string;
  plan: string;
  balance: number | null;
  charged: number;
}

function creditsView(a: Account, charged: number): CreditsView {
  return { account_id: a.account_id, plan: a.plan, balance: PLANS[a.plan].unlimited ? null : a.balance, charged };
}

async function precheck(vd: VettingDeps, auth: Auth, n: number): Promise<void> {
  // Fast 402 on committed state before computing; the writer re-checks atomically.
  if (auth.apiKey) return;
  if (!auth.brokerId)
    throw new InvalidInputError('give broker_id (its free account pays) or send an API key (Authorization: Bearer plc_...)', {
      response: { parameter: 'broker_id' },
    });
  const a = await getAccount(vd.store, freeAccountId(auth.brokerId));
  if (a) assertCanPay(a, n);
}

const SQL = loadStatements('./vetting.state.sql', import.meta.url, ['history_by_dot', 'record_by_id']);

const INSERT_VETTING = insertRowsSql('vetting_records', {
  vetting_id: 'VARCHAR',
  dot_number: 'BIGINT',
  broker_id: 'VARCHAR',
  account_id: 'VARCHAR',
  credits_charged: 'INTEGER',
  vetting_date: 'VARCHAR',
  risk_score: 'DOUBLE',
  risk_level: 'VARCHAR',
  recommendation: 'VARCHAR',
  data_hash: 'VARCHAR',
  record_json: 'VARCHAR',
  snapshot_json: 'VARCHAR',
  signature: 'VARCHAR',
  key_id: 'VARCHAR',
});

function insertRecord(
  tx: StateTx,
  { signed, recordJson }: { signed: SignedVetting; recordJson: string },
  snapshotJson: string,
  account: Account,
  charged: number,
): void {
  const { signature, ...record } = signed;
  tx.defer(INSERT_VETTING, {
    vetting_id: record.vetting_id,
    dot_number: record.dot_number,
    broker_id: record.broker_id,
    account_id: account.account_id,
    credits_charged: charged,
    vetting_date: record.vetting_date,
    risk_score: record.risk_score,
    risk_level: record.risk_level,
    recommendation: record.recommendation,
    data_hash: record.data_hash,
    record_json: recordJson,
    snapshot_json: snapshotJson,
    signature: signature.value,
    key_id: signature.key_id,
  });
}

/** Creates one signed vetting record and debits one credit, durably, in one transaction. */
export async function createVetting(vd: VettingDeps, dot: number, auth: Auth): Promise<{ record: SignedVetting; credits: CreditsView }> {
  await precheck(vd, auth, 1);
  const c = await computeVetting(vd, dot, auth.brokerId);
  return vd.store.write(async (tx) => {
    const now = vd.now();
    const account = await resolveAccount(tx, auth, now);
    assertCanPay(account, 1);
    const made = sign(vd, { ...c.record, vetting_id: newVettingId(now), snapshot_available: true });
    insertRecord(tx, made, c.snapshot_json, account, 1);
    const after = await debit(tx, account, 1, now);
    return { record: made.signed, credits: creditsView(after, 1) };
  });
}

export type BatchItem =
  | { dot_number: string | number; status: 'ok'; record: SignedVetting }
  | { dot_number: string | number; status: 'error'; http_status: number; error: string };

/**
 * Batch vetting: the plan's batch limit and the balance are checked against
 * the whole batch before any record is made (402/400 and nothing written);
 * each DOT then succeeds or fails on its own; one credit per record made, all
 * records and the debit committed in one transaction.
 */
export async function batchVet(
  vd: VettingDeps,
  dots: Array<string | number>,
  auth: Auth,
): Promise<{ broker_id: string | null; requested: number; succeeded: number; failed: number; results: BatchItem[]; credits: CreditsView }> {
  // Resolve (maybe create) the account and check the whole batch first.
  await vd.store.write(async (tx) => {
    const account = await resolveAccount(tx, auth, vd.now());
    assertBatchSize(account, dots.length);
    assertCanPay(account, dots.length);
  });
  const computed: Array<{ dot: string | number; ok: ComputedVetting } | { dot: string | number; err: unknown }> = new Array(dots.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < dots.length; i = next++) {
      const raw = dots[i]!;
      const parsed = dotNumberSchema.safeParse(raw);
      if (!parsed.success) {
        computed[i] = {
          dot: raw,
          err: new InvalidInputError(`invalid DOT number ${JSON.stringify(raw)}: ${parsed.error.issues[0]?.message}`),
        };
        continue;
      }
      try {
        computed[i] = { dot: raw, ok: await computeVetting(vd, parsed.data, auth.brokerId) };
      } catch (e) {
        computed[i] = { dot: raw, err: e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, dots.length) }, worker));
  const oks = computed.filter((c): c is { dot: string | number; ok: ComputedVetting } => 'ok' in c);
  return vd.store.write(async (tx) => {
    const now = vd.now();
    const account = await resolveAccount(tx, auth, now);
    assertCanPay(account, oks.length);
    const results: BatchItem[] = [];
    for (const c of computed) {
      if ('ok' in c) {
        const made = sign(vd, { ...c.ok.record, vetting_id: newVettingId(now), snapshot_available: true });
        insertRecord(tx, made, c.ok.snapshot_json, account, 1);
        results.push({ dot_number: c.dot, status: 'ok', record: made.signed });
      } else {
        const e = c.err;
        const status = e instanceof PipelineError ? (e instanceof NotFoundError ? 404 : e instanceof InvalidInputError ? 400 : 503) : 500;
        results.push({ dot_number: c.dot, status: 'error', http_status: status, error: publicMessage(e) });
      }
    }
    const after = await debit(tx, account, oks.length, now);
    return {
      broker_id: auth.brokerId,
      requested: dots.length,
      succeeded: oks.length,
      failed: dots.length - oks.length,
      results,
      credits: creditsView(after, oks.length),
    };
  });
}

/**
 * A stored record as served. Records stored before the spec 001 types (carrier an object, red_flags objects, basics
 * an array) are served in the contract shape, with the exact stored form beside as `signed_record`: the signature
 * covers that form (canonical JSON of `signed_record`), not the upgraded fields.
 */
export function recordFromStored(json: string): VettingRecord & { signed_record?: Record<string, unknown> } {
  const r = JSON.parse(json) as Record<string, unknown>;
  if (typeof r.carrier === 'string') return r as unknown as VettingRecord;
  const carrier = (r.carrier ?? {}) as CarrierSummary;
  const contract = contractFields(Number(r.dot_number), carrier, {
    red_flags: Array.isArray(r.red_flags) ? (r.red_flags as RedFlag[]) : [],
    basics: Array.isArray(r.basics) ? (r.basics as BasicResult[]) : [],
  });
  return { ...(r as unknown as VettingRecord), ...contract, signed_record: r };
}

/** A carrier's vetting history, newest first (records without their snapshots). */
export async function getVettingHistory(
  store: StateStore,
  dot: number,
  limit: number,
  cursor?: string,
): Promise<{ dot_number: number; count: number; records: SignedVetting[]; next_cursor: string | null }> {
  // Newest first; pages by keyset (vetting_date, vetting_id) so records vetted meanwhile never shift a page.
  const after = decodeKeyCursor(cursor, 2);
  const rows = await queryCommitted(store, SQL.history_by_dot, [dot, limit + 1, after?.[0] ?? null, after?.[1] ?? null]);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const records = page.map((r) =>
    withMembers(recordFromStored(String(r.record_json)), {
      signature: { alg: 'Ed25519' as const, key_id: String(r.key_id), value: String(r.signature) },
    }),
  );
  const last = page.at(-1);
  return {
    dot_number: dot,
    count: records.length,
    records,
    next_cursor: more && last ? encodeKeyCursor([String(last.vetting_date), String(last.vetting_id)]) : null,
  };
}

/** One record with its stored `snapshot_json` (the bytes `data_hash` is computed over). */
export async function getVettingRecord(store: StateStore, id: string): Promise<SignedVetting & { snapshot_json: string }> {
  const rows = await queryCommitted(store, SQL.record_by_id, [id]);
  const r = rows[0];
  if (!r) throw new NotFoundError(`vetting record ${id} does not exist`, { response: { vetting_id: id } });
  return withMembers(recordFromStored(String(r.record_json)), {
    signature: { alg: 'Ed25519', key_id: String(r.key_id), value: String(r.signature) },
    snapshot_json: String(r.snapshot_json),
  });
}

/** What the vetting queries need, from ServiceDeps (shared by REST and MCP). */
export async function vettingDepsOf(deps: ServiceDeps): Promise<VettingDeps> {
  const fmcsa = deps.readers.fmcsa;
  if (!fmcsa) throw new SourceUnavailableError('the fmcsa domain is not served by this instance');
  return { fmcsa, store: stateOf(deps), signingKey: await signingKeyOf(deps), live: deps.liveRefresher ?? null, now: deps.now };
}
