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

/** Number of decimal digits of a non-negative safe integer. */
export function uintLength(n: number): number {
  let len = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    len++;
  }
  return len;
}

/** Writes `String(n)` (n a non-negative safe integer) at `pos` as ASCII; returns the position after it. */
export function writeUint(buf: Uint8Array, pos: number, n: number): number {
  const end = pos + uintLength(n);
  let i = end;
  do {
    const q = Math.floor(n / 10);
    buf[--i] = 48 + (n - q * 10);
    n = q;
  } while (n > 0);
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
