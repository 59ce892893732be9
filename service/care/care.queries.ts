/**
 * Proof-of-care documents: transport-free functions behind /api/care.
 * Writes go through the state store; an append takes the document's lock
 * (`tx.lock('care:<id>')`, an advisory transaction lock on PostgreSQL) before
 * reading its head, so appends to one document are serialised across every
 * API node (each reads the head the previous one committed: no fork, no
 * repeated seq) and acknowledged only after their transaction committed durably.
 * There is deliberately no update or delete function: the chain is append-only.
 */
import { decodeKeyCursor, encodeKeyCursor } from '../platform/pagination.ts';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InvalidInputError, NotFoundError, StageOrderError } from '../../lib/errors.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import {
  insertRowsSql,
  loadStatements,
  queryCommitted,
  updateRowsSql,
  type StateStore,
  type StateTx,
  type WriteHint,
} from '../platform/state.store.ts';
import {
  CARE_STAGES,
  checkStageOrder,
  hashCreation,
  hashEvent,
  storeJson,
  verifyChain,
  type CareStage,
  type EventContent,
  type StoredDocument,
  type StoredEvent,
  type VerifyResult,
} from './care.chain.ts';

const SQL = loadStatements('./care.state.sql', import.meta.url, [
  'vetting_hash',
  'head',
  'stages',
  'document',
  'events',
  'recent_documents',
]);
const MAX_JSON_CHARS = 32_768;
const party = z.union([
  z.string().trim().min(1).max(200),
  z
    .object({ name: z.string().trim().min(1).max(200).optional(), dot_number: z.union([z.string(), z.number()]).optional() })
    .loose()
    .refine((o) => Object.keys(o).length > 0, 'must name the party'),
]);

export const createCareInput = z.object({
  shipment: z
    .object({
      ref: z.string().trim().min(1).max(100),
      commodity: z.string().trim().min(1).max(200),
      value_usd: z.number().finite().nonnegative(),
    })
    .loose(),
  parties: z.object({ broker: party, carrier: party }).loose(),
  vetting_id: z
    .string()
    .trim()
    .regex(/^VET-[A-Za-z0-9-]+$/, 'must be a VET-... id')
    .optional(),
});
export type CreateCareInput = z.infer<typeof createCareInput>;

export const careEventInput = z.object({
  stage: z.enum(CARE_STAGES),
  actor: z.union([z.string().trim().min(1).max(200), z.object({ name: z.string().trim().min(1).max(200) }).loose()]),
  evidence: z.record(z.string(), z.unknown()).default({}),
  occurred_at: z.iso.datetime({ offset: true }).optional(),
});
export type CareEventInput = z.infer<typeof careEventInput>;

/** A stored custody event: its hashed content (without the document id) and its own hash. */
export type CareEvent = Omit<EventContent, 'document_id'> & { hash: string };

export interface CareDocument {
  document_id: string;
  created_at: string;
  shipment: unknown;
  parties: unknown;
  vetting_id: string | null;
  vetting_data_hash: string | null;
  creation_hash: string;
  event_count: number;
  head_hash: string;
  last_stage: string | null;
}

const INSERT_DOCUMENT = insertRowsSql('care_documents', {
  document_id: 'VARCHAR',
  created_at: 'VARCHAR',
  shipment_json: 'VARCHAR',
  parties_json: 'VARCHAR',
  vetting_id: 'VARCHAR',
  vetting_data_hash: 'VARCHAR',
  creation_hash: 'VARCHAR',
  event_count: 'INTEGER',
  head_hash: 'VARCHAR',
  last_stage: 'VARCHAR',
});
const INSERT_EVENT = insertRowsSql('care_events', {
  document_id: 'VARCHAR',
  seq: 'INTEGER',
  stage: 'VARCHAR',
  actor_json: 'VARCHAR',
  evidence_json: 'VARCHAR',
  occurred_at: 'VARCHAR',
  recorded_at: 'VARCHAR',
  prev_hash: 'VARCHAR',
  hash: 'VARCHAR',
});
const UPDATE_HEAD = updateRowsSql('care_documents', 'document_id', {
  document_id: 'VARCHAR',
  event_count: 'INTEGER',
  head_hash: 'VARCHAR',
  last_stage: 'VARCHAR',
});

function newDocumentId(now: Date): string {
  return `POGC-${now.toISOString().slice(0, 10).replace(/-/g, '')}-${randomBytes(6).toString('hex').toUpperCase()}`;
}

function capJson(v: unknown, field: string): string {
  const text = storeJson(v);
  if (text.length > MAX_JSON_CHARS)
    throw new InvalidInputError(`${field} is larger than ${MAX_JSON_CHARS} characters of JSON`, { response: { parameter: field } });
  return text;
}

/** Creates a custody document; a given vetting_id must name a stored vetting record (its data_hash is bound in). */
export async function createCareDocument(store: StateStore, input: CreateCareInput, now: Date): Promise<CareDocument> {
  const shipmentJson = capJson(input.shipment, 'shipment');
  const partiesJson = capJson(input.parties, 'parties');
  return store.write(async (tx) => {
    let vettingHash: string | null = null;
    if (input.vetting_id) {
      const rows = await tx.read(SQL.vetting_hash, [input.vetting_id]);
      if (!rows[0])
        throw new NotFoundError(`vetting record ${input.vetting_id} does not exist`, {
          response: { vetting_id: input.vetting_id, parameter: 'vetting_id' },
        });
      vettingHash = String(rows[0].data_hash);
    }
    const created_at = now.toISOString();
    const document_id = newDocumentId(now);
    const creation_hash = hashCreation({
      document_id,
      created_at,
      shipment: JSON.parse(shipmentJson),
      parties: JSON.parse(partiesJson),
      vetting_id: input.vetting_id ?? null,
      vetting_data_hash: vettingHash,
    });
    tx.defer(INSERT_DOCUMENT, {
      document_id,
      created_at,
      shipment_json: shipmentJson,
      parties_json: partiesJson,
      vetting_id: input.vetting_id ?? null,
      vetting_data_hash: vettingHash,
      creation_hash,
      event_count: 0,
      head_hash: creation_hash,
      last_stage: null,
    });
    tx.cache.set(`care:${document_id}`, { event_count: 0, head_hash: creation_hash, stages: [], vetting_id: input.vetting_id ?? null });
    return {
      document_id,
      created_at,
      shipment: JSON.parse(shipmentJson),
      parties: JSON.parse(partiesJson),
      vetting_id: input.vetting_id ?? null,
      vetting_data_hash: vettingHash,
      creation_hash,
      event_count: 0,
      head_hash: creation_hash,
      last_stage: null,
    };
  });
}

interface Head {
  event_count: number;
  head_hash: string;
  /** The stages recorded so far, each once (checkStageOrder asks only which exist). */
  stages: string[];
  /** The vetting the document was opened with (its paying account owns the document's webhooks), or null. */
  vetting_id: string | null;
}

/** The lock and reads `readHead` starts with, as a write hint (state.types.ts WriteHint). */
function headHint(id: string): WriteHint {
  return {
    lock: `care:${id}`,
    reads: [
      [SQL.head, [id]],
      [SQL.stages, [id]],
    ],
  };
}

async function readHead(tx: StateTx, id: string): Promise<Head> {
  const k = `care:${id}`;
  const cached = tx.cache.get(k) as Head | undefined;
  if (cached) {
    await tx.lock(k); // already held when cached on PostgreSQL (one group); nothing to do embedded
    return cached;
  }
  const [docs, stageRows] = await tx.readLocked(k, headHint(id).reads);
  if (!docs![0]) throw new NotFoundError(`care document ${id} does not exist`, { response: { document_id: id } });
  const head = {
    event_count: Number(docs![0].event_count),
    head_hash: String(docs![0].head_hash),
    stages: stageRows!.map((r) => String(r.stage)),
    vetting_id: docs![0].vetting_id == null ? null : String(docs![0].vetting_id),
  };
  tx.cache.set(k, head);
  return head;
}

/**
 * Appends one custody event: serialised with every other write, checked
 * against the stage order rules, linked to the current head, committed
 * durably before it resolves.
 */
export async function appendCareEvent(
  store: StateStore,
  documentId: string,
  input: CareEventInput,
  now: Date,
): Promise<CareEvent & { document_id: string }> {
  return (await appendCareEventOf(store, documentId, input, now)).event;
}

/** `appendCareEvent`, also naming the vetting the document was opened with (null: no account to notify). */
export async function appendCareEventOf(
  store: StateStore,
  documentId: string,
  input: CareEventInput,
  now: Date,
): Promise<{ event: CareEvent & { document_id: string }; vetting_id: string | null }> {
  const actorJson = capJson(input.actor, 'actor');
  const evidenceJson = capJson(input.evidence, 'evidence');
  return store.write(
    async (tx) => {
      const head = await readHead(tx, documentId);
      const rule = checkStageOrder(head.stages, input.stage as CareStage);
      // Refused (nothing written): previous_stages are the stages already recorded, each once, in first-seen order.
      if (rule)
        throw new StageOrderError(`stage ${input.stage} is not allowed here: ${rule}`, {
          response: { document_id: documentId, stage: input.stage, previous_stages: head.stages, stages: CARE_STAGES },
        });
      const content = {
        document_id: documentId,
        seq: head.event_count + 1,
        stage: input.stage,
        actor: JSON.parse(actorJson) as unknown,
        evidence: JSON.parse(evidenceJson) as unknown,
        occurred_at: input.occurred_at ?? null,
        recorded_at: now.toISOString(),
        prev_hash: head.head_hash,
      };
      const hash = hashEvent(content);
      tx.defer(INSERT_EVENT, {
        document_id: documentId,
        seq: content.seq,
        stage: content.stage,
        actor_json: actorJson,
        evidence_json: evidenceJson,
        occurred_at: content.occurred_at,
        recorded_at: content.recorded_at,
        prev_hash: content.prev_hash,
        hash,
      });
      tx.defer(UPDATE_HEAD, { document_id: documentId, event_count: content.seq, head_hash: hash, last_stage: content.stage }, documentId);
      tx.cache.set(`care:${documentId}`, {
        event_count: content.seq,
        head_hash: hash,
        stages: head.stages.includes(content.stage) ? head.stages : [...head.stages, content.stage],
        vetting_id: head.vetting_id,
      });
      return { event: { ...content, hash }, vetting_id: head.vetting_id };
    },
    headHint(documentId), // PostgreSQL: the lock and head reads of every append of a group leave in one round trip
  );
}

function toStoredDocument(r: Row): StoredDocument {
  return {
    document_id: String(r.document_id),
    created_at: String(r.created_at),
    shipment_json: String(r.shipment_json),
    parties_json: String(r.parties_json),
    vetting_id: r.vetting_id === null ? null : String(r.vetting_id),
    vetting_data_hash: r.vetting_data_hash === null ? null : String(r.vetting_data_hash),
    creation_hash: String(r.creation_hash),
    event_count: Number(r.event_count),
    head_hash: String(r.head_hash),
  };
}

function toStoredEvent(r: Row): StoredEvent {
  return {
    document_id: String(r.document_id),
    seq: Number(r.seq),
    stage: String(r.stage),
    actor_json: String(r.actor_json),
    evidence_json: String(r.evidence_json),
    occurred_at: r.occurred_at === null ? null : String(r.occurred_at),
    recorded_at: String(r.recorded_at),
    prev_hash: String(r.prev_hash),
    hash: String(r.hash),
  };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function loadStored(
  store: StateStore,
  id: string,
): Promise<{ doc: StoredDocument; events: StoredEvent[]; lastStage: string | null }> {
  const docs = await store.query(SQL.document, [id]);
  if (!docs[0]) throw new NotFoundError(`care document ${id} does not exist`, { response: { document_id: id } });
  const events = (await store.query(SQL.events, [id])).map(toStoredEvent);
  return { doc: toStoredDocument(docs[0]), events, lastStage: docs[0].last_stage === null ? null : String(docs[0].last_stage) };
}

/** Pure hash-chain check of one document (no authentication needed). */
export async function verifyCareDocument(store: StateStore, id: string): Promise<VerifyResult> {
  const { doc, events } = await loadStored(store, id);
  return verifyChain(doc, events);
}

/** One document with its events and a fresh verification. */
export async function getCareDocument(
  store: StateStore,
  id: string,
): Promise<{ document: CareDocument; events: CareEvent[]; verification: VerifyResult }> {
  const { doc, events, lastStage } = await loadStored(store, id);
  return {
    document: {
      document_id: doc.document_id,
      created_at: doc.created_at,
      shipment: safeParse(doc.shipment_json),
      parties: safeParse(doc.parties_json),
      vetting_id: doc.vetting_id,
      vetting_data_hash: doc.vetting_data_hash,
      creation_hash: doc.creation_hash,
      event_count: doc.event_count,
      head_hash: doc.head_hash,
      last_stage: lastStage,
    },
    events: events.map((e) => ({
      seq: e.seq,
      stage: e.stage,
      actor: safeParse(e.actor_json),
      evidence: safeParse(e.evidence_json),
      occurred_at: e.occurred_at,
      recorded_at: e.recorded_at,
      prev_hash: e.prev_hash,
      hash: e.hash,
    })),
    verification: verifyChain(doc, events),
  };
}

/** Most recent documents first. */
export async function listCareDocuments(
  store: StateStore,
  limit: number,
  cursor?: string,
): Promise<{ documents: Array<Omit<CareDocument, 'creation_hash'> & { creation_hash: string }>; next_cursor: string | null }> {
  // Newest first; pages by keyset (created_at, document_id) so documents created meanwhile never shift a page.
  const after = decodeKeyCursor(cursor, 2);
  const found = await queryCommitted(store, SQL.recent_documents, [limit + 1, after?.[0] ?? null, after?.[1] ?? null]);
  const rows = found.slice(0, limit);
  const last = rows.at(-1);
  const next_cursor = found.length > limit && last ? encodeKeyCursor([String(last.created_at), String(last.document_id)]) : null;
  const documents = rows.map((r) => {
    const d = toStoredDocument(r);
    return {
      document_id: d.document_id,
      created_at: d.created_at,
      shipment: safeParse(d.shipment_json),
      parties: safeParse(d.parties_json),
      vetting_id: d.vetting_id,
      vetting_data_hash: d.vetting_data_hash,
      creation_hash: d.creation_hash,
      event_count: d.event_count,
      head_hash: d.head_hash,
      last_stage: r.last_stage === null ? null : String(r.last_stage),
    };
  });
  return { documents, next_cursor };
}
