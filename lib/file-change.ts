/**
 * Whether a file (or folder) changed since a reader last looked, from its change times. Linux stamps mtime and ctime
 * from a coarse clock (the kernel's tick, a few ms), so two writes within one tick can leave the same stamps: a look
 * made within CHANGE_TIME_GRAIN_MS of the change it saw does not count, and the next look reads the file again.
 */

/** What a reader saw: the change time of its last read, and when it read. */
export interface ChangeSeen {
  change: number;
  at: number;
}

/** Longer than any kernel tick that stamps change times (1–10 ms). */
export const CHANGE_TIME_GRAIN_MS = 100;

/** A reader that has read nothing yet. */
export function unseen(): ChangeSeen {
  return { change: -1, at: 0 };
}

/**
 * True when the file must be read again: its change time (the later of mtime and ctime; 0 when it is missing) differs
 * from what `seen` records, or `seen` was taken within CHANGE_TIME_GRAIN_MS of it. Records the new look in `seen`.
 */
export function changedSince(seen: ChangeSeen, st: { mtimeMs: number; ctimeMs: number } | null, now: number = Date.now()): boolean {
  const change = st ? Math.max(st.mtimeMs, st.ctimeMs) : 0;
  if (change === seen.change && seen.at - change > CHANGE_TIME_GRAIN_MS) return false;
  seen.change = change;
  seen.at = now;
  return true;
}
