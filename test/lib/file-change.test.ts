/**
 * changedSince (lib/file-change.ts): a reader reads a file again when its change time moved, and also when its last
 * look came within one clock grain of the change it saw, since Linux stamps change times from a coarse tick and a
 * second write in the same tick leaves the same stamps (an API key revoked in the tick that created it).
 */
import { describe, expect, it } from 'vitest';
import { CHANGE_TIME_GRAIN_MS, changedSince, unseen } from '../../lib/file-change.ts';

const stamp = (ms: number) => ({ mtimeMs: ms, ctimeMs: ms });

describe('changedSince', () => {
  it('reads a file first, then only when its change time moves', () => {
    const seen = unseen();
    expect(changedSince(seen, stamp(1_000), 5_000)).toBe(true);
    expect(changedSince(seen, stamp(1_000), 5_001)).toBe(false);
    expect(changedSince(seen, stamp(1_000.25), 5_002)).toBe(true);
    expect(changedSince(seen, stamp(1_000.25), 5_003)).toBe(false);
  });

  it('reads again after a look within one grain of the change, where a same-tick write leaves the same stamps', () => {
    const seen = unseen();
    // Created at 1,000 and read 2 ms later; a revocation in the same tick keeps the stamp 1,000.
    expect(changedSince(seen, stamp(1_000), 1_002)).toBe(true);
    expect(changedSince(seen, stamp(1_000), 1_003)).toBe(true);
    // That look was still within the grain; one past it settles.
    expect(changedSince(seen, stamp(1_000), 1_000 + CHANGE_TIME_GRAIN_MS + 1)).toBe(true);
    expect(changedSince(seen, stamp(1_000), 1_000 + CHANGE_TIME_GRAIN_MS + 2)).toBe(false);
  });

  it('takes the later of mtime and ctime, so a rename or a restored mtime counts', () => {
    const seen = unseen();
    expect(changedSince(seen, { mtimeMs: 1_000, ctimeMs: 1_000 }, 9_000)).toBe(true);
    expect(changedSince(seen, { mtimeMs: 1_000, ctimeMs: 2_000 }, 9_001)).toBe(true);
    expect(changedSince(seen, { mtimeMs: 1_000, ctimeMs: 2_000 }, 9_002)).toBe(false);
  });

  it('treats a missing file as change time 0: read once, then not until it appears', () => {
    const seen = unseen();
    expect(changedSince(seen, null, 9_000)).toBe(true);
    expect(changedSince(seen, null, 9_001)).toBe(false);
    expect(changedSince(seen, stamp(9_002), 9_003)).toBe(true);
  });
});
