/**
 * Ownership of the state store across API processes on one DATA_DIR.
 *
 * DuckDB allows one read-write holder per database file; any other process,
 * even a READ_ONLY one, fails with "Could not set lock" (../shared/notes/tech.md
 * §5). So when several API processes share a DATA_DIR (to use every core, with
 * request counters shared through Redis), exactly one of them owns
 * `state/proofline-state.duckdb`. The others serve every read endpoint, answer
 * the state-backed ones (vetting, proof-of-care, credits) with a 503 naming the
 * holder, report it on /api/health, and keep trying to take the store over so
 * that one of them becomes the owner when the owner stops.
 *
 * Any other failure to open the store (a corrupt file, a full disk) is not a
 * conflict and is thrown: the process must not start half-working for that.
 */
import type { Logger } from '../../lib/log.ts';
import { DuckDbStateStore, type DuckDbStateStoreOptions } from './state.duckdb.ts';
import type { StateStore } from './state.store.ts';

/** DuckDB's message when another process holds the file's lock (IO Error: Could not set lock on file ...). */
const LOCK_CONFLICT = /Could not set lock on file/;
const LOCK_HOLDER = /Conflicting lock is held in (.+?) \(PID (\d+)\)/;

/** Whether `e` is DuckDB refusing the file because another process holds its lock. */
export function isLockConflict(e: unknown): boolean {
  return e instanceof Error && LOCK_CONFLICT.test(e.message);
}

/** `PID 1234 (/usr/bin/node)` from DuckDB's lock-conflict message, or a generic phrase when it names no process. */
export function describeLockHolder(e: unknown): string {
  const m = e instanceof Error ? LOCK_HOLDER.exec(e.message) : null;
  return m ? `PID ${m[2]} (${m[1]})` : 'another process';
}

export interface StateClaim {
  /** The open store once this process owns it, else null. */
  readonly store: StateStore | null;
  /** Who holds the store while this process does not (`PID n (...)`), else null. */
  readonly heldBy: string | null;
  /** Stops retrying; closes the store if this process owns it. */
  close(): Promise<void>;
}

export interface ClaimOptions extends DuckDbStateStoreOptions {
  /** Delay between attempts while another process holds the store (default 5 s). */
  retryMs?: number;
  log?: Logger;
  /** Called once, when a retry takes the store over. */
  onAcquired?: (store: StateStore) => void;
}

/**
 * Opens the state store at `file`, or, when another process holds it, returns
 * a claim without a store that retries in the background (timer unref'd:
 * it never keeps the process alive).
 */
export async function claimStateStore(file: string, opts: ClaimOptions = {}): Promise<StateClaim> {
  const { retryMs = 5000, log, onAcquired, ...storeOpts } = opts;
  let store: StateStore | null = null;
  let heldBy: string | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let attempt: Promise<void> | null = null;

  const tryOpen = async (): Promise<boolean> => {
    try {
      store = await DuckDbStateStore.open(file, storeOpts);
      heldBy = null;
      return true;
    } catch (e) {
      if (!isLockConflict(e)) throw e;
      heldBy = describeLockHolder(e);
      return false;
    }
  };

  const schedule = (): void => {
    timer = setTimeout(() => {
      attempt = tryOpen()
        .then(async (ok) => {
          if (closed) {
            await store?.close();
            store = null;
            return;
          }
          if (ok) {
            log?.info({ file }, 'state store taken over: vetting, care and credits are served by this process now');
            onAcquired?.(store!);
          } else schedule();
        })
        .catch((e: unknown) => {
          // Not a lock conflict (disk, corruption): keep serving reads, say so, try again later.
          log?.error({ err: (e as Error).message, file }, 'state store could not be opened');
          if (!closed) schedule();
        })
        .finally(() => (attempt = null));
    }, retryMs);
    timer.unref();
  };

  if (!(await tryOpen())) {
    log?.warn(
      { file, held_by: heldBy },
      'state store is held by another process on this DATA_DIR: serving reads; vetting, care and credits answer 503 here until it is free',
    );
    schedule();
  }

  return {
    get store() {
      return store;
    },
    get heldBy() {
      return heldBy;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await attempt;
      await store?.close();
      store = null;
    },
  };
}
