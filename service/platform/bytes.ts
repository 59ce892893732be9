/**
 * Byte assembly for the hot path: response bodies and query-log lines are
 * built by copying pre-encoded parts and writing integers digit by digit into
 * a buffer, instead of concatenating strings that the socket write then
 * flattens and encodes (measured on this machine: string building, flattening
 * and number-to-string were the largest items of a hot answer after the
 * socket write itself).
 *
 * Contract: every writer here produces exactly the bytes of the string form
 * it replaces (`String(n)` for a non-negative safe integer; `formatMs` for a
 * duration), pinned by test/api/hot-bytes.test.ts.
 */

/** Number of decimal digits of a non-negative safe integer (comparisons, not a division a digit). */
export function uintLength(n: number): number {
  if (n < 1e6) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 1e4 ? 4 : n < 1e5 ? 5 : 6;
  if (n < 1e12) return n < 1e7 ? 7 : n < 1e8 ? 8 : n < 1e9 ? 9 : n < 1e10 ? 10 : n < 1e11 ? 11 : 12;
  return n < 1e13 ? 13 : n < 1e14 ? 14 : n < 1e15 ? 15 : 16;
}

/** Writes the `count` low decimal digits of `n` (0 <= n < 2^31) ending just before `end`, in 32-bit integer arithmetic. */
function writeDigits(buf: Uint8Array, end: number, n: number, count: number): void {
  for (let i = end - 1; i >= end - count; i--) {
    const q = (n / 10) | 0;
    buf[i] = 48 + n - q * 10;
    n = q;
  }
}

/** Writes `String(n)` (n a non-negative safe integer) at `pos` as ASCII; returns the position after it. */
export function writeUint(buf: Uint8Array, pos: number, n: number): number {
  const len = uintLength(n);
  const end = pos + len;
  if (n < 2147483648) {
    writeDigits(buf, end, n, len);
    return end;
  }
  // Beyond 32 bits (a millisecond timestamp: 13 digits): the low 9 digits, then the rest, each in integer arithmetic.
  const hi = Math.floor(n / 1e9);
  writeDigits(buf, end, n - hi * 1e9, 9);
  writeDigits(buf, end - 9, hi, len - 9);
  return end;
}

/** Whole microseconds of a duration in milliseconds (0 for a negative or non-finite one). */
function micros(ms: number): number {
  return ms > 0 && ms < 9e12 ? Math.round(ms * 1000) : 0;
}

/** A duration in milliseconds as JSON number text with exactly three decimals (microseconds): `0.042`, `12.500`. */
export function formatMs(ms: number): string {
  const us = micros(ms);
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

/** Byte length of `formatMs(ms)`. */
export function msLength(ms: number): number {
  const us = micros(ms);
  return uintLength((us - (us % 1000)) / 1000) + 4;
}

/** Writes `formatMs(ms)` at `pos`; returns the position after it. */
export function writeMs(buf: Uint8Array, pos: number, ms: number): number {
  const us = micros(ms);
  const frac = us % 1000;
  pos = writeUint(buf, pos, (us - frac) / 1000);
  buf[pos] = 46; // .
  buf[pos + 1] = 48 + Math.floor(frac / 100);
  buf[pos + 2] = 48 + (Math.floor(frac / 10) % 10);
  buf[pos + 3] = 48 + (frac % 10);
  return pos + 4;
}

const SLAB_BYTES = 256 * 1024;
let slab = new Uint8Array(0);
let slabUsed = 0;
/** Slabs allocated so far (tests bound it: a released body's bytes are reused, so hot answers need no new slab). */
export let slabsAllocated = 0;

/**
 * A fresh `len`-byte view for one response body, cut from a shared slab
 * (views are never handed out twice, so a body can be written to a socket
 * asynchronously while later ones are assembled). Bodies over 1/8 of a slab
 * get their own buffer.
 */
export function allocBody(len: number): Uint8Array {
  if (len > SLAB_BYTES / 8) return Buffer.allocUnsafeSlow(len);
  if (slabUsed + len > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES); // not zero-filled: every byte of a view is written before it is sent
    slabUsed = 0;
    slabsAllocated++;
  }
  const view = new Uint8Array(slab.buffer, slabUsed, len);
  slabUsed += (len + 7) & ~7;
  return view;
}

/**
 * Hands back the view `allocBody` returned last, once nothing will read it again (the node listener: its bytes
 * were copied to the kernel by the synchronous socket write): the next body reuses its bytes. Any other view
 * (an older one, a large body's own buffer) is left alone. Issue 22 item 5: a fresh 256 KB slab every ~110 hot
 * answers was 80 MB/s of off-heap memory at the hot path's rate, which V8 counts towards its GC triggers.
 */
export function releaseBody(view: Uint8Array): void {
  if (view.buffer === slab.buffer && view.byteOffset + ((view.byteLength + 7) & ~7) === slabUsed) slabUsed = view.byteOffset;
}

let transientView: Uint8Array | null = null;
/** Buffers of transient bodies over 1/8 of a slab: those handed back and free for the next one, and those out. */
const largeFree: ArrayBuffer[] = [];
const largeOut = new WeakSet<ArrayBuffer>();
const LARGE_TRANSIENT_MAX = 4 << 20;
const LARGE_FREE_MAX = 8;

/**
 * `allocBody` for one answer's bytes that nothing keeps once they are written (an MCP answer: mcp.routes.ts
 * `answerText`), which the node listener may then hand back with `releaseTransientBody`. Bodies that are kept (a
 * cached answer's parts) must come from `allocBody`. A body over 1/8 of a slab (up to 4 MB) gets a buffer of its
 * own, taken from those handed back when one is large enough; a body that is never handed back (an in-process
 * `app.fetch`, the start-up warm-up) keeps its buffer, which the GC frees with it.
 * Issue 22: an MCP answer in a fresh Buffer was memory outside V8's heap on every call (4–90 KB), which started V8's
 * mark-compacts for external memory pressure under load (their pauses were the warm p99 of the MCP tools).
 */
export function allocTransientBody(len: number): Uint8Array {
  if (len > SLAB_BYTES / 8) {
    if (len > LARGE_TRANSIENT_MAX) return Buffer.allocUnsafeSlow(len);
    let ab: ArrayBuffer | undefined;
    const i = largeFree.findIndex((b) => b.byteLength >= len);
    if (i >= 0) [ab] = largeFree.splice(i, 1);
    else {
      let size = SLAB_BYTES / 4;
      while (size < len) size *= 2;
      ab = Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer;
    }
    largeOut.add(ab!);
    return new Uint8Array(ab!, 0, len);
  }
  const view = allocBody(len);
  transientView = view;
  return view;
}

/** Whether `view` is a transient body not yet handed back (a large one's buffer out, or the last slab view). */
export function isTransientBody(view: Uint8Array): boolean {
  return view === transientView || largeOut.has(view.buffer as ArrayBuffer);
}

/**
 * Hands back a transient body once nothing will read it again: a large one's buffer (once), or the slab view
 * `allocTransientBody` returned last when no other view came after it (anything else is left alone).
 */
export function releaseTransientBody(view: Uint8Array): void {
  const ab = view.buffer as ArrayBuffer;
  if (largeOut.has(ab)) {
    largeOut.delete(ab);
    if (largeFree.length < LARGE_FREE_MAX) largeFree.push(ab);
    return;
  }
  if (view !== transientView) return;
  transientView = null;
  releaseBody(view);
}
