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
 */
import { createHash } from 'node:crypto';
import { ConflictError, InvalidInputError } from '../../lib/errors.ts';
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
  const claimed = await store.write(async (tx) => {
    await tx.lock(`idem:${scope}:${key}`);
    const rows = await tx.read(SQL.claim_row, [scope, key]);
    const row = rows[0];
    if (row) {
      if (String(row.request_sha256) !== fingerprint)
        throw new InvalidInputError('this Idempotency-Key was used with a different request body', {
          response: { parameter: 'Idempotency-Key' },
        });
      if (row.status !== null) {
        const answer: StoredAnswer = { status: Number(row.status), contentType: String(row.content_type), json: String(row.body) };
        return { answer };
      }
      if (now().getTime() - Date.parse(String(row.created_at)) < CLAIM_STALE_MS)
        throw new ConflictError('a request with this Idempotency-Key is still being processed; retry shortly', {
          response: { parameter: 'Idempotency-Key' },
        });
      await tx.write(SQL.retake, [scope, key, now().toISOString()]); // stale claim of a node that died: take it over
      return { answer: null };
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
    return { answer: null };
  });
  if (claimed.answer) return { answer: claimed.answer, replayed: true };
  let answer: StoredAnswer | null = null;
  try {
    answer = await handler();
  } finally {
    if (answer && answer.status < 500) {
      const done = answer;
      await store.write(async (tx) => tx.write(SQL.save, [scope, key, done.status, done.contentType, done.json]));
    } else {
      await store.write(async (tx) => tx.write(SQL.release, [scope, key])).catch(() => undefined);
    }
  }
  return { answer, replayed: false };
}
