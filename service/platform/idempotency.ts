/**
 * Idempotent POSTs (issue 20; IETF draft "The Idempotency-Key HTTP Header
 * Field"): a POST carrying `Idempotency-Key` is answered once; a retry with
 * the same key (same client, same path) gets the first answer again, with
 * `Idempotent-Replayed: true`, instead of making a second record.
 *
 * The key is claimed in the state store before the handler runs (a row with
 * no status yet, under the key's lock, so two nodes racing on one key cannot
 * both run it); the answer is stored once it is known. A retry while the
 * first request is still running gets 409; a key reused for a different
 * request body gets 400 naming the header; a 5xx answer is not kept (the key is released, so a
 * retry runs again). A claim left by a node that died is taken over after
 * CLAIM_STALE_MS. Keys live in `idempotency_keys` (both backends).
 *
 * A write that misses the state store's deadline (state.deadline.ts) answers
 * 503 with an unknown outcome, and the request keeps running behind it until
 * the store answers: its answer is then stored (or its key released when the
 * write failed), so the retry with the same key gets the first answer, and a
 * write that committed after its deadline is never made twice. (A store hung
 * for longer than CLAIM_STALE_MS lets a retry take the claim over: the bound
 * of this promise. PostgreSQL cancels a statement long before, at its
 * statement_timeout.)
 */
import { createHash } from 'node:crypto';
import { ConflictError, InvalidInputError } from '../../lib/errors.ts';
import { watchOutcome } from './state.deadline.ts';
import { insertRowsSql, loadStatements, type StateStore } from './state.store.ts';

const SQL = loadStatements('./idempotency.sql', import.meta.url, ['claim_row', 'release', 'retake', 'save']);
const INSERT_KEY = insertRowsSql('idempotency_keys', {
  scope: 'VARCHAR',
  key: 'VARCHAR',
  request_sha256: 'VARCHAR',
  status: 'INTEGER',
  content_type: 'VARCHAR',
  body: 'VARCHAR',
  created_at: 'VARCHAR',
});
/** A claim older than this belongs to a request whose node died: a retry may take it over. */
const CLAIM_STALE_MS = 60_000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The answer kept for a key. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  json: string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Validates the header value: 1–255 visible ASCII characters (400 naming the header otherwise). */
export function checkIdempotencyKey(key: string): string {
  if (!KEY_RE.test(key))
    throw new InvalidInputError('invalid Idempotency-Key header: 1 to 255 visible ASCII characters', {
      response: { parameter: 'Idempotency-Key' },
    });
  return key;
}

/**
 * Runs `handler` once per (scope, key): returns its answer, or the stored
 * answer of the first request with this key (`replayed: true`). `scope` names
 * the client and path; `body` is the request body (a retry must repeat it).
 */
export async function answerIdempotently(
  store: StateStore,
  scope: string,
  key: string,
  body: string,
  now: () => Date,
  handler: () => Promise<StoredAnswer | null>,
): Promise<{ answer: StoredAnswer | null; replayed: boolean }> {
  const fingerprint = sha256(body);
  // A write of this request that misses the store's deadline (state.deadline.ts) answers 503 "outcome unknown" at
  // once (`cut`), while the work below goes on with the store's real answer: it stores the handler's answer (a retry
  // replays it) or releases the key (nothing was written: a retry runs again). So a retry after a timed-out write
  // that committed later gets the first answer and never makes a second record.
  let unknown = false;
  let answerUnknown: (e: unknown) => void = () => undefined;
  const cut = new Promise<never>((_, reject) => (answerUnknown = reject));
  cut.catch(() => undefined);
  const work = watchOutcome(
    (e) => {
      if (unknown) return;
      unknown = true;
      answerUnknown(e);
    },
    async (): Promise<{ answer: StoredAnswer | null; replayed: boolean }> => {
      const claimed = await claim(store, scope, key, fingerprint, now);
      if (claimed) return { answer: claimed, replayed: true };
      if (unknown) {
        // The claim was confirmed only after the request had its 503: the handler never ran, so the key is freed.
        await release(store, scope, key);
        return { answer: null, replayed: false };
      }
      let answer: StoredAnswer | null = null;
      try {
        answer = await handler();
      } finally {
        if (answer && answer.status < 500) {
          const done = answer;
          await store.write(async (tx) => tx.write(SQL.save, [scope, key, done.status, done.contentType, done.json]));
        } else {
          await release(store, scope, key);
        }
      }
      return { answer, replayed: false };
    },
  );
  work.catch(() => undefined); // after a cut nobody awaits it; its outcome is in the store
  return Promise.race([work, cut]);
}

/** Claims (scope, key) under its lock: the stored answer of an earlier request with this key, or null (claimed now). */
async function claim(store: StateStore, scope: string, key: string, fingerprint: string, now: () => Date): Promise<StoredAnswer | null> {
  return store.write(async (tx) => {
    await tx.lock(`idem:${scope}:${key}`);
    const rows = await tx.read(SQL.claim_row, [scope, key]);
    const row = rows[0];
    if (row) {
      if (String(row.request_sha256) !== fingerprint)
        throw new InvalidInputError('this Idempotency-Key was used with a different request body', {
          response: { parameter: 'Idempotency-Key' },
        });
      if (row.status !== null) return { status: Number(row.status), contentType: String(row.content_type), json: String(row.body) };
      if (now().getTime() - Date.parse(String(row.created_at)) < CLAIM_STALE_MS)
        throw new ConflictError('a request with this Idempotency-Key is still being processed; retry shortly', {
          response: { parameter: 'Idempotency-Key' },
        });
      await tx.write(SQL.retake, [scope, key, now().toISOString()]); // stale claim of a node that died: take it over
      return null;
    }
    tx.defer(INSERT_KEY, {
      scope,
      key,
      request_sha256: fingerprint,
      status: null,
      content_type: null,
      body: null,
      created_at: now().toISOString(),
    });
    return null;
  });
}

/**
 * Forgets a claim whose request failed. When the store refuses the release (its breaker is open after a hung
 * call), it is tried again in the background a few times, so a retry is not kept waiting for CLAIM_STALE_MS.
 */
async function release(store: StateStore, scope: string, key: string, attempt = 0): Promise<void> {
  try {
    await store.write(async (tx) => tx.write(SQL.release, [scope, key]));
  } catch {
    if (attempt < 3) setTimeout(() => void release(store, scope, key, attempt + 1), 2500 * (attempt + 1)).unref();
  }
}
