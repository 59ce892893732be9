/**
 * Proof-of-care custody chain: stage rules and the pure hash-chain functions
 * (no I/O), shared by the writer (care.queries.ts) and by verification.
 *
 * Chain (fmcsa notes, "tamper evidence"): the document's creation record is
 * hashed first (`creation_hash`); event 1 stores `prev_hash = creation_hash`;
 * event n stores `prev_hash = hash(event n-1)`. An event's `hash` is the
 * SHA-256 of the RFC 8785 canonical JSON of its content (every stored field
 * but `hash` itself), so anyone can recompute it from the JSON export.
 */
import { canonicalJson, hashCanonical } from '../../lib/hash.ts';

/**
 * Custody stages, in lifecycle order. Order rules (checked on append):
 * - TENDER: the first event, exactly once (the carrier accepts the load).
 * - PICKUP_HANDOFF: once, after TENDER (shipper hands the freight to the driver).
 * - IN_TRANSIT: any number, after PICKUP_HANDOFF and before DELIVERY_HANDOFF (check calls, positions, seal checks).
 * - EXCEPTION: any number, any time after TENDER until CLOSED (damage, delay, temperature excursion, cancellation).
 * - DELIVERY_HANDOFF: once, after PICKUP_HANDOFF (the consignee receives the freight).
 * - CLOSED: once, the last event; after DELIVERY_HANDOFF, or after an EXCEPTION when the load never delivered.
 */
export const CARE_STAGES = ['TENDER', 'PICKUP_HANDOFF', 'IN_TRANSIT', 'EXCEPTION', 'DELIVERY_HANDOFF', 'CLOSED'] as const;
export type CareStage = (typeof CARE_STAGES)[number];

/** Returns null when `stage` may follow the stages already recorded, else the rule it breaks. */
export function checkStageOrder(previous: readonly string[], stage: CareStage): string | null {
  const has = (s: CareStage) => previous.includes(s);
  if (has('CLOSED')) return 'the document is CLOSED: no event may follow CLOSED';
  if (previous.length === 0 && stage !== 'TENDER') return 'the first event must be TENDER';
  switch (stage) {
    case 'TENDER':
      return previous.length === 0 ? null : 'TENDER is recorded once, as the first event';
    case 'PICKUP_HANDOFF':
      return has('PICKUP_HANDOFF') ? 'PICKUP_HANDOFF is recorded once' : null;
    case 'IN_TRANSIT':
      if (!has('PICKUP_HANDOFF')) return 'IN_TRANSIT needs a PICKUP_HANDOFF first';
      return has('DELIVERY_HANDOFF') ? 'IN_TRANSIT cannot follow DELIVERY_HANDOFF' : null;
    case 'EXCEPTION':
      return null;
    case 'DELIVERY_HANDOFF':
      if (!has('PICKUP_HANDOFF')) return 'DELIVERY_HANDOFF needs a PICKUP_HANDOFF first';
      return has('DELIVERY_HANDOFF') ? 'DELIVERY_HANDOFF is recorded once' : null;
    case 'CLOSED':
      return has('DELIVERY_HANDOFF') || has('EXCEPTION')
        ? null
        : 'CLOSED needs a DELIVERY_HANDOFF (or an EXCEPTION for a load that never delivered)';
  }
}

/** The hashed content of a document's creation record. */
export interface CreationContent {
  document_id: string;
  created_at: string;
  shipment: unknown;
  parties: unknown;
  vetting_id: string | null;
  vetting_data_hash: string | null;
}

/** The hashed content of a custody event. */
export interface EventContent {
  document_id: string;
  seq: number;
  stage: string;
  actor: unknown;
  evidence: unknown;
  occurred_at: string | null;
  recorded_at: string;
  prev_hash: string;
}

export function hashCreation(c: CreationContent): string {
  return hashCanonical({ kind: 'care_document', ...c });
}

export function hashEvent(e: EventContent): string {
  return hashCanonical({ kind: 'care_event', ...e });
}

/** Stored form of a JSON value: its canonical JSON text (so a changed byte is a changed value or a non-canonical text). */
export function storeJson(v: unknown): string {
  return canonicalJson(v);
}

export interface StoredDocument {
  document_id: string;
  created_at: string;
  shipment_json: string;
  parties_json: string;
  vetting_id: string | null;
  vetting_data_hash: string | null;
  creation_hash: string;
  event_count: number;
  head_hash: string;
}

export interface StoredEvent {
  document_id: string;
  seq: number;
  stage: string;
  actor_json: string;
  evidence_json: string;
  occurred_at: string | null;
  recorded_at: string;
  prev_hash: string;
  hash: string;
}

export interface ChainProblem {
  seq: number | null;
  code:
    | 'creation_hash_mismatch'
    | 'not_canonical'
    | 'hash_mismatch'
    | 'prev_hash_mismatch'
    | 'sequence_gap'
    | 'head_mismatch'
    | 'count_mismatch'
    | 'document_mismatch'
    | 'unknown_stage'
    | 'stage_order';
  message: string;
}

export interface VerifyResult {
  document_id: string;
  valid: boolean;
  events_verified: number;
  head_hash: string;
  problems: ChainProblem[];
}

function parseStored(text: string, seq: number | null, field: string, problems: ChainProblem[]): unknown {
  try {
    const v = JSON.parse(text);
    if (canonicalJson(v) !== text)
      problems.push({ seq, code: 'not_canonical', message: `${field} is not the canonical JSON that was hashed` });
    return v;
  } catch {
    problems.push({ seq, code: 'not_canonical', message: `${field} is not valid JSON` });
    return text;
  }
}

/**
 * Recomputes the whole chain from stored rows. Pure: no key, no database.
 * `events_verified` counts events whose own hash and link both check out,
 * from the start of the chain up to the first broken one.
 */
export function verifyChain(doc: StoredDocument, events: StoredEvent[]): VerifyResult {
  const problems: ChainProblem[] = [];
  const creation: CreationContent = {
    document_id: doc.document_id,
    created_at: doc.created_at,
    shipment: parseStored(doc.shipment_json, null, 'shipment', problems),
    parties: parseStored(doc.parties_json, null, 'parties', problems),
    vetting_id: doc.vetting_id,
    vetting_data_hash: doc.vetting_data_hash,
  };
  if (hashCreation(creation) !== doc.creation_hash)
    problems.push({ seq: null, code: 'creation_hash_mismatch', message: 'the creation record does not hash to the stored creation_hash' });
  let prev = doc.creation_hash;
  let verified = 0;
  let intact = problems.length === 0;
  const stages: string[] = [];
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  sorted.forEach((ev, i) => {
    const before = problems.length;
    if (ev.document_id !== doc.document_id)
      problems.push({ seq: ev.seq, code: 'document_mismatch', message: `event belongs to ${ev.document_id}` });
    if (ev.seq !== i + 1) problems.push({ seq: ev.seq, code: 'sequence_gap', message: `expected event ${i + 1}, found ${ev.seq}` });
    const content: EventContent = {
      document_id: ev.document_id,
      seq: ev.seq,
      stage: ev.stage,
      actor: parseStored(ev.actor_json, ev.seq, 'actor', problems),
      evidence: parseStored(ev.evidence_json, ev.seq, 'evidence', problems),
      occurred_at: ev.occurred_at,
      recorded_at: ev.recorded_at,
      prev_hash: ev.prev_hash,
    };
    if (hashEvent(content) !== ev.hash)
      problems.push({ seq: ev.seq, code: 'hash_mismatch', message: `event ${ev.seq} does not hash to its stored hash (content changed)` });
    if (ev.prev_hash !== prev)
      problems.push({
        seq: ev.seq,
        code: 'prev_hash_mismatch',
        message: `event ${ev.seq} does not link to ${i === 0 ? 'the creation record' : `event ${i}`}`,
      });
    if (!(CARE_STAGES as readonly string[]).includes(ev.stage))
      problems.push({ seq: ev.seq, code: 'unknown_stage', message: `unknown stage ${ev.stage}` });
    else {
      const rule = checkStageOrder(stages, ev.stage as CareStage);
      if (rule) problems.push({ seq: ev.seq, code: 'stage_order', message: rule });
    }
    stages.push(ev.stage);
    if (problems.length === before && intact) verified++;
    else intact = false;
    prev = ev.hash;
  });
  if (sorted.length !== doc.event_count)
    problems.push({
      seq: null,
      code: 'count_mismatch',
      message: `the document records ${doc.event_count} events, ${sorted.length} are stored`,
    });
  if (prev !== doc.head_hash)
    problems.push({
      seq: null,
      code: 'head_mismatch',
      message: 'the last event is not the recorded head of the chain (events removed or added)',
    });
  return { document_id: doc.document_id, valid: problems.length === 0, events_verified: verified, head_hash: prev, problems };
}
