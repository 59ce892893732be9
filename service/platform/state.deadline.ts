/**
 * Deadlines on the state store (issue 25 item 1): every call the request path
 * makes to the store (reads and writes, embedded DuckDB or PostgreSQL) runs
 * under a deadline and a circuit breaker (deadline.ts), so a hung store (a
 * DuckDB writer stuck in a checkpoint or a disk stall, a PostgreSQL that stops
 * answering, a lock held elsewhere) costs a request at most one deadline, and
 * then, while the breaker is open, nothing.
 *
 * Correctness needs the store, so it never fails open: past the deadline the
 * request answers 503 with Retry-After. What the 503 promises depends on the
 * call (`outcome` in the body):
 *
 * - a read, or a write refused by the open breaker: `not_written`; nothing of
 *   the request was applied, retrying is safe.
 * - a write that missed its deadline: `unknown`. The store may still apply it
 *   after the answer (a group commit that was only slow commits later; the
 *   call is abandoned, never cancelled), so nothing acknowledged is lost, and
 *   nothing can be promised either. The client retries with its
 *   `Idempotency-Key` (idempotency.ts): the request it retries keeps running
 *   in the background (`watchOutcome`), its answer is stored once the store
 *   answers, and the retry gets that first answer (409 while it is still
 *   running), never a second record or a second debit. Without the header a
 *   retry may apply the write twice.
 *
 * PostgreSQL also cancels on its side: `statement_timeout` and `lock_timeout`
 * of the API's sessions equal the deadline (state.postgres.ts), so a statement
 * or lock wait that outlives it is rolled back rather than committed later.
 *
 * Only the API's request path goes through this wrapper (service/main.ts);
 * background jobs and CLIs use the store itself and wait as long as it takes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { SourceUnavailableError } from '../../lib/errors.ts';
import type { Row } from '../../lib/warehouse/duckdb.ts';
import { CircuitBreaker, DeadlineError } from './deadline.ts';
import type { SqlParams, StateHealth, StateStore, StateTx, WriteHint } from './state.types.ts';

/** Default deadline of one state-store call on the request path (STATE_DEADLINE_MS). */
export const DEFAULT_STATE_DEADLINE_MS = 5000;

export interface StateDeadlineOptions {
  /** Deadline of one call, in ms (queueing for the group commit included). */
  timeoutMs?: number;
  /** Consecutive misses that open the breaker (default 3: one slow operation does not refuse everyone's writes). */
  failuresToOpen?: number;
  /** How long the open breaker refuses calls (default 2,000 ms). */
  openMs?: number;
}

/** What a request whose outcome became unknown is told (idempotency.ts installs it). */
interface OutcomeWatch {
  onUnknown(e: SourceUnavailableError): void;
}

const outcomeWatch = new AsyncLocalStorage<OutcomeWatch>();

/**
 * Runs `work` so that a write of it that misses its deadline calls
 * `onUnknown` (the caller answers 503 now) and then goes on waiting for the
 * store: `work` continues with the store's real answer, so what it does next
 * (store the answer under its Idempotency-Key, or release the key when the
 * write failed) reflects what the store actually did.
 */
export function watchOutcome<T>(onUnknown: (e: SourceUnavailableError) => void, work: () => Promise<T>): Promise<T> {
  return outcomeWatch.run({ onUnknown }, work);
}

function notWritten(message: string, cause: unknown): SourceUnavailableError {
  return new SourceUnavailableError(message, { retryAfterMs: 5000, response: { dependency: 'state', outcome: 'not_written' } }, { cause });
}

function outcomeUnknown(timeoutMs: number, cause: unknown): SourceUnavailableError {
  return new SourceUnavailableError(
    `the state store did not confirm this write within ${timeoutMs} ms: its outcome is unknown (it may still be applied). ` +
      'Retry with the same Idempotency-Key to get the first answer, exactly once',
    { retryAfterMs: 5000, response: { dependency: 'state', outcome: 'unknown' } },
    { cause },
  );
}

/** The error a caller sees for a failed call: the store's own error when it answered, a 503 when it did not. */
function mapFailure(e: unknown, timeoutMs: number): unknown {
  if (!(e instanceof DeadlineError)) return e;
  if (e.reason === 'error') return e.cause ?? e;
  return e.reason === 'open'
    ? notWritten('the state store missed its deadline recently (circuit open): nothing of this request was written, retry shortly', e)
    : notWritten(`the state store did not answer within ${timeoutMs} ms: nothing of this request was written, retry shortly`, e);
}

/** A state store whose calls run under a deadline and a circuit breaker; see the header. */
export class DeadlineStateStore implements StateStore {
  readonly breaker: CircuitBreaker;

  constructor(
    readonly inner: StateStore,
    opts: StateDeadlineOptions = {},
  ) {
    this.breaker = new CircuitBreaker('state', {
      timeoutMs: opts.timeoutMs ?? DEFAULT_STATE_DEADLINE_MS,
      failuresToOpen: opts.failuresToOpen ?? 3,
      openMs: opts.openMs ?? 2000,
      // The operation's own errors (400, 402, 404, 409, a bug) are answers; only an unreachable store is its failure.
      isAnswer: (e) => !(e instanceof SourceUnavailableError),
    });
  }

  get backend(): StateStore['backend'] {
    return this.inner.backend;
  }

  get stats(): StateStore['stats'] {
    return this.inner.stats;
  }

  async query(sql: string, params?: SqlParams): Promise<Row[]> {
    try {
      return await this.breaker.run(() => this.inner.query(sql, params));
    } catch (e) {
      throw mapFailure(e, this.breaker.timeoutMs);
    }
  }

  /** The inner store's cached read (embedded store; plain `query` without one), under the same deadline and breaker. */
  async queryCached(sql: string, params?: SqlParams): Promise<Row[]> {
    const inner = this.inner;
    try {
      return await this.breaker.run(() => (inner.queryCached ? inner.queryCached(sql, params) : inner.query(sql, params)));
    } catch (e) {
      throw mapFailure(e, this.breaker.timeoutMs);
    }
  }

  async write<T>(run: (tx: StateTx) => Promise<T>, hint?: WriteHint): Promise<T> {
    let pending: Promise<T> | undefined;
    try {
      // The hint goes along: a group's locks and head reads in one round trip (state.types.ts WriteHint).
      return await this.breaker.run(() => (pending = this.inner.write(run, hint)));
    } catch (e) {
      if (e instanceof DeadlineError && e.reason === 'timeout' && pending) {
        const err = outcomeUnknown(this.breaker.timeoutMs, e);
        const watch = outcomeWatch.getStore();
        if (watch) {
          watch.onUnknown(err);
          return pending; // the request has its 503; the work behind it goes on with the store's real answer
        }
        pending.catch(() => undefined); // abandoned: nobody awaits it any more
        throw err;
      }
      throw mapFailure(e, this.breaker.timeoutMs);
    }
  }

  /** The store's own health (not through the breaker: /api/health probes under its own deadline). */
  health(): Promise<StateHealth> {
    return this.inner.health();
  }

  /** A trivial read straight to the store (not through the breaker), for health and readiness probes. */
  async probe(): Promise<boolean> {
    return (await this.inner.query('SELECT 1 AS ok')).length === 1;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The store behind the request path's deadlines (for background work that must wait as long as it takes). */
export function storeBehindDeadlines(store: StateStore): StateStore {
  return store instanceof DeadlineStateStore ? store.inner : store;
}
