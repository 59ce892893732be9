/**
 * Deadlines for dependency calls on the request path (issue 25, item 1): a
 * call that does not settle within its deadline is abandoned (the request
 * goes on without it), and a dependency that keeps missing its deadline is
 * not asked at all for a while (a circuit breaker), so a hung dependency (a
 * network black hole, a Redis stopped mid-command) costs a request at most
 * one deadline, and then nothing.
 *
 * States: `closed` (calls go through), `open` (calls fail at once with
 * DeadlineError until `openMs` has passed), `half_open` (one trial call goes
 * through; its success closes the breaker, its failure opens it again).
 * `failuresToOpen` consecutive failures (timeouts or errors) open it.
 *
 * What a caller does with the failure is its own contract: metering counts
 * in memory (fail open), a write that needs its dependency answers 503.
 */

/** A dependency call that missed its deadline, failed, or was not tried because its breaker is open. */
export class DeadlineError extends Error {
  constructor(
    readonly dependency: string,
    readonly reason: 'timeout' | 'open' | 'error',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DeadlineError';
  }
}

export interface BreakerOptions {
  /** Deadline of one call, in ms. */
  timeoutMs: number;
  /** Consecutive failures that open the breaker (default 1: a hung dependency is cut off after one deadline). */
  failuresToOpen?: number;
  /** How long an open breaker refuses calls before letting one trial through (default 2,000 ms). */
  openMs?: number;
  /** Injected clock (tests). */
  now?: () => number;
  /** Errors that are answers, not failures of the dependency (a 404): rethrown as they are, the breaker stays closed. */
  isAnswer?: (e: unknown) => boolean;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** What /api/health reports of one dependency. */
export interface BreakerReport {
  state: BreakerState;
  timeout_ms: number;
  consecutive_failures: number;
  last_failure: string | null;
  last_failure_at: string | null;
  /** Duration of the last call that settled in time, in ms. */
  last_latency_ms: number | null;
}

export class CircuitBreaker {
  private failures = 0;
  private openedAt = -1;
  private trial = false;
  private lastFailure: string | null = null;
  private lastFailureAt: number | null = null;
  private lastLatency: number | null = null;
  readonly timeoutMs: number;
  private readonly failuresToOpen: number;
  private readonly openMs: number;
  private readonly now: () => number;
  private readonly isAnswer: (e: unknown) => boolean;

  constructor(
    readonly name: string,
    opts: BreakerOptions,
  ) {
    this.timeoutMs = opts.timeoutMs;
    this.failuresToOpen = opts.failuresToOpen ?? 1;
    this.openMs = opts.openMs ?? 2000;
    this.now = opts.now ?? Date.now;
    this.isAnswer = opts.isAnswer ?? (() => false);
  }

  get state(): BreakerState {
    if (this.openedAt < 0) return 'closed';
    return this.now() - this.openedAt >= this.openMs ? 'half_open' : 'open';
  }

  /**
   * Runs `call` under the deadline. Rejects with DeadlineError on timeout, on
   * an open breaker, or (wrapping it) when `call` rejects. A call abandoned
   * at its deadline keeps running; its late result is ignored.
   */
  async run<T>(call: () => Promise<T>): Promise<T> {
    const state = this.state;
    if (state === 'open' || (state === 'half_open' && this.trial))
      throw new DeadlineError(this.name, 'open', `${this.name}: not called, it missed its deadline recently (circuit open)`);
    if (state === 'half_open') this.trial = true;
    const t0 = this.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        call(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new DeadlineError(this.name, 'timeout', `${this.name}: no answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
          timer.unref?.();
        }),
      ]);
      this.succeeded(this.now() - t0);
      return result;
    } catch (e) {
      if (!(e instanceof DeadlineError) && this.isAnswer(e)) {
        this.succeeded(this.now() - t0);
        throw e;
      }
      const err =
        e instanceof DeadlineError
          ? e
          : new DeadlineError(this.name, 'error', `${this.name}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
      this.failed(err.message);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private succeeded(ms: number): void {
    this.failures = 0;
    this.openedAt = -1;
    this.trial = false;
    this.lastLatency = Math.round(ms * 10) / 10;
  }

  private failed(message: string): void {
    this.failures++;
    this.trial = false;
    this.lastFailure = message;
    this.lastFailureAt = this.now();
    if (this.failures >= this.failuresToOpen) this.openedAt = this.now();
  }

  report(): BreakerReport {
    return {
      state: this.state,
      timeout_ms: this.timeoutMs,
      consecutive_failures: this.failures,
      last_failure: this.lastFailure,
      last_failure_at: this.lastFailureAt === null ? null : new Date(this.lastFailureAt).toISOString(),
      last_latency_ms: this.lastLatency,
    };
  }
}
