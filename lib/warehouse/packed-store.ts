/**
 * Packed record stores: one precomputed text record per integer key (a
 * carrier's snapshot row by DOT), written once at publish and served without
 * DuckDB. DuckDB point lookups top out near 1,100/s on this machine (shared
 * notes, tech.md); a binary search in a typed array plus one positioned read of
 * a page-cached file costs microseconds.
 *
 * Files, in a snapshot's `packed/` directory:
 *
 *   <name>.tsv   one line per record, `<key>\t<value>\n`, in whatever order DuckDB
 *                produced them (insertion order not preserved; no sort: 4.4 M rows of JSON do not fit the memory
 *                limit, and an external sort costs more than the whole write).
 *                Written by DuckDB's CSV writer with QUOTE '' (values are JSON
 *                text, whose tabs and newlines are always escaped, so no line is
 *                ever quoted).
 *   <name>.idx   little-endian binary index built by scanning the .tsv once and
 *                radix-sorting by key:
 *                magic "PLPK0001", uint32 count, uint32 reserved, then float64 value
 *                offsets[count], int32 keys[count], uint32 value lengths[count]
 *                (8-byte arrays first, so every array stays aligned for any count).
 *
 * A store is opened when a reader swaps to the snapshot and closed (once its
 * in-flight reads finish) when the reader swaps away from it.
 */
import { hash } from 'node:crypto';
import { readSync } from 'node:fs';
import { open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral, withInsertionOrder } from './duckdb.ts';

const MAGIC = 'PLPK0001';
const HEADER = 16;

export interface PackedInfo {
  records: number;
  /** Bytes of the .tsv data file. */
  bytes: number;
}

/**
 * The integer key of a text key (a VIN) in a packed store: the first 28 bits of its MD5, so that DuckDB
 * (`textKeySql`) and Node compute the same key. Distinct texts may share a key: such a store's record holds
 * every text of its key, and the reader picks its own by the text itself.
 */
export function textKey(text: string): number {
  // One-shot `crypto.hash`: the digest `createHash` gives, without a Hash object (and its native handle) per lookup.
  return Number.parseInt(hash('md5', text, 'hex').slice(0, 7), 16);
}

/** `textKey` in DuckDB SQL, of the VARCHAR expression `expr`. */
export function textKeySql(expr: string): string {
  return `('0x' || left(md5(${expr}), 7))::INTEGER`;
}

/** Name of the leaf store every snapshot carries (publish.ts writeLeafStore) (service/receipts: `/api/verify` reads it instead of `origin_leaves`). */
export const LEAF_STORE = 'origin_leaves';

/** The integer key of a leaf hash in the leaf store: its first 7 hex digits (28 bits; a SHA-256 is uniform). */
export function leafKey(leafHash: string): number {
  return Number.parseInt(leafHash.slice(0, 7), 16);
}

export function packedPaths(dir: string, name: string): { data: string; index: string } {
  return { data: path.join(dir, `${name}.tsv`), index: path.join(dir, `${name}.idx`) };
}

/**
 * Writes a packed store from `selectSql`, which must return exactly two
 * columns: an INTEGER key (unique) and a VARCHAR value with no raw tab or
 * newline (JSON text). DuckDB writes the data file; Node scans it once for the
 * index. Both files are written under temporary names, then renamed.
 *
 * Several selects (disjoint keys) are run one after the other and their lines
 * appended in order: a store whose values aggregate many rows per key (list or
 * string_agg, whose states DuckDB cannot spill to disk) is built in passes over
 * key ranges, so its memory stays bounded by one pass.
 */
export async function writePackedStore(conn: DuckDBConnection, selectSql: PackedSelect, dir: string, name: string): Promise<PackedInfo> {
  const { data, index } = packedPaths(dir, name);
  const tmpData = `${data}.tmp`;
  try {
    await copyPackedLines(conn, selectSql, tmpData);
  } catch (err) {
    await rm(tmpData, { force: true });
    throw err;
  }
  const idx = sortIndex(await indexPackedData(tmpData), data);
  await writePackedIndex(`${index}.tmp`, idx);
  await rename(tmpData, data);
  await rename(`${index}.tmp`, index);
  return { records: idx.count, bytes: (await stat(data)).size };
}

/**
 * What a store is written from: one SELECT (columns k, v), or batches: a list or an async sequence of SELECTs run one after
 * the other (the sequence may change temp tables between them, e.g. the keys of the next batch), whose lines are
 * concatenated. Batches bound the memory of a SELECT that aggregates whole records (registry-packed.ts).
 */
export type PackedSelect = string | readonly string[] | AsyncIterable<string>;

/** DuckDB writes the lines `<key>\t<value>\n` of `selectSql` (columns k, v; or each batch's in turn) to `file`. */
async function copyPackedLines(conn: DuckDBConnection, selectSql: PackedSelect, file: string): Promise<void> {
  // One text column `<key>\t<value>` per line: the CSV writer costs about a quarter less with one column
  // than with two (measured on the 4.4 M-row carrier snapshot); QUOTE '' writes the text as it is.
  // Line order is free (the index is sorted by key): without insertion order DuckDB builds and writes the lines on
  // every thread at once (about a third less CPU for the JSON stores, issue 22). The session's setting is restored.
  const copy = (sql: string, to: string) =>
    withInsertionOrder(conn, false, () =>
      conn.run(
        `COPY (SELECT CAST(k AS VARCHAR) || chr(9) || coalesce(v, '') FROM (${sql}) AS packed_source(k, v)) TO ${quoteLiteral(to)} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '')`,
      ),
    );
  if (typeof selectSql === 'string') {
    await copy(selectSql, file);
    return;
  }
  // The first batch is written by DuckDB straight to `file` (often the biggest: crash_by_vin's one-row keys, 0.7 GB
  // at full scale, were copied through Node a second time); each later batch goes to a part file appended to it.
  const part = `${file}.part`;
  let out: FileHandle | null = null;
  try {
    const chunk = Buffer.allocUnsafe(16 << 20);
    for await (const sql of selectSql) {
      if (!out) {
        await copy(sql, file);
        out = await open(file, 'a');
        continue;
      }
      await copy(sql, part);
      const fh = await open(part, 'r');
      try {
        for (;;) {
          const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
          if (bytesRead === 0) break;
          await out.write(chunk, 0, bytesRead);
        }
      } finally {
        await fh.close();
      }
    }
    // No batch at all: an empty store.
    if (!out) out = await open(file, 'w');
  } finally {
    await out?.close();
    await rm(part, { force: true });
  }
}

async function writePackedIndex(file: string, idx: PackedIndex): Promise<void> {
  const fh = await open(file, 'w');
  try {
    const header = Buffer.alloc(HEADER);
    header.write(MAGIC, 0, 'latin1');
    header.writeUInt32LE(idx.count, 8);
    await fh.write(header);
    await fh.write(new Uint8Array(idx.offsets.buffer, 0, idx.count * 8));
    await fh.write(new Uint8Array(idx.keys.buffer, 0, idx.count * 4));
    await fh.write(new Uint8Array(idx.lengths.buffer, 0, idx.count * 4));
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function readPackedIndex(file: string): Promise<PackedIndex> {
  const raw = await readFile(file);
  if (raw.length < HEADER || raw.toString('latin1', 0, 8) !== MAGIC) throw new Error(`${file}: not a packed index`);
  const count = raw.readUInt32LE(8);
  if (raw.length !== HEADER + count * 16) throw new Error(`${file}: truncated`);
  // Copy into aligned buffers (a Buffer from readFile may sit at any offset of a shared pool).
  const body = new Uint8Array(raw.buffer, raw.byteOffset + HEADER, count * 16).slice();
  return {
    count,
    offsets: new Float64Array(body.buffer, 0, count),
    keys: new Int32Array(body.buffer, count * 8, count),
    lengths: new Uint32Array(body.buffer, count * 12, count),
  };
}

/**
 * A store that changes only at some keys (a delta publish): the previous snapshot's store `previousDir/name` with
 * the records of `changed` keys dropped, and the records of `selectSql` (which should return changed keys only)
 * appended. A changed key `selectSql` does not return is removed. Unchanged records are copied byte for byte in
 * runs (no DuckDB, no JSON), and only the new lines are scanned for the index; the merged index is sorted as a
 * full write's is, so a record `selectSql` returns for an unchanged key fails as a duplicate instead of
 * silently shadowing it. The result has the same records as a full write over the same rows; only their order in
 * the data file differs (which no reader sees).
 */
export async function writePackedStoreDelta(
  conn: DuckDBConnection,
  selectSql: PackedSelect,
  dir: string,
  name: string,
  previousDir: string,
  changed: ReadonlySet<number>,
): Promise<PackedInfo> {
  const { data, index } = packedPaths(dir, name);
  const prev = packedPaths(previousDir, name);
  const tmpNew = `${data}.new.tmp`;
  const tmpData = `${data}.tmp`;
  await copyPackedLines(conn, selectSql, tmpNew);
  const fresh = await indexPackedData(tmpNew);
  const old = await readPackedIndex(prev.index);
  const kept: number[] = [];
  for (let i = 0; i < old.count; i++) if (!changed.has(old.keys[i]!)) kept.push(i);
  kept.sort((a, b) => old.offsets[a]! - old.offsets[b]!);
  const n = kept.length + fresh.count;
  const idx: PackedIndex = { count: n, keys: new Int32Array(n), offsets: new Float64Array(n), lengths: new Uint32Array(n) };
  const out = await open(tmpData, 'w');
  const src = await open(prev.data, 'r');
  let outPos = 0;
  try {
    // Runs of adjacent kept lines are copied with one read and one write (in chunks of at most 16 MB).
    const copyRun = async (fh: FileHandle, from: number, to: number) => {
      const chunk = Buffer.allocUnsafe(Math.min(16 << 20, Math.max(1, to - from)));
      for (let at = from; at < to; ) {
        const len = Math.min(chunk.length, to - at);
        const { bytesRead } = await fh.read(chunk, 0, len, at);
        if (bytesRead !== len) throw new Error(`${prev.data}: short read at byte ${at}`);
        await out.write(chunk, 0, len);
        at += len;
      }
    };
    let runFrom = -1;
    let runTo = -1;
    for (let j = 0; j < kept.length; j++) {
      const i = kept[j]!;
      const keyLen = String(old.keys[i]).length;
      const lineFrom = old.offsets[i]! - keyLen - 1;
      const lineTo = old.offsets[i]! + old.lengths[i]! + 1;
      if (lineFrom !== runTo) {
        if (runFrom >= 0) await copyRun(src, runFrom, runTo);
        runFrom = lineFrom;
      }
      runTo = lineTo;
      idx.keys[j] = old.keys[i]!;
      idx.offsets[j] = outPos + keyLen + 1;
      idx.lengths[j] = old.lengths[i]!;
      outPos += lineTo - lineFrom;
    }
    if (runFrom >= 0) await copyRun(src, runFrom, runTo);
    const freshFh = await open(tmpNew, 'r');
    try {
      await copyRun(freshFh, 0, (await stat(tmpNew)).size);
    } finally {
      await freshFh.close();
    }
    for (let j = 0; j < fresh.count; j++) {
      idx.keys[kept.length + j] = fresh.keys[j]!;
      idx.offsets[kept.length + j] = outPos + fresh.offsets[j]!;
      idx.lengths[kept.length + j] = fresh.lengths[j]!;
    }
    await out.sync();
  } finally {
    await src.close();
    await out.close();
  }
  await rm(tmpNew, { force: true });
  const sorted = sortIndex(idx, data);
  await writePackedIndex(`${index}.tmp`, sorted);
  await rename(tmpData, data);
  await rename(`${index}.tmp`, index);
  return { records: sorted.count, bytes: (await stat(data)).size };
}

interface PackedIndex {
  count: number;
  keys: Int32Array;
  offsets: Float64Array;
  lengths: Uint32Array;
}

/**
 * One pass over the data file: key, value offset and value length of every
 * line, in file order. Reads into one reused buffer (a read stream allocating
 * a buffer per chunk cost 1.7 s for the 1.6 GB carrier store, this 0.3 s); a
 * line cut by the buffer's end is moved to its start before the next read.
 */
async function indexPackedData(file: string): Promise<PackedIndex> {
  let cap = 1 << 16;
  let keys = new Int32Array(cap);
  let offsets = new Float64Array(cap);
  let lengths = new Uint32Array(cap);
  let count = 0;
  let base = 0; // file offset of buf[0]
  let buf = Buffer.allocUnsafe(16 << 20);
  let fill = 0; // bytes of buf holding data (a carried partial line first)
  const fh = await open(file, 'r');
  try {
    for (;;) {
      if (fill === buf.length) {
        // One line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, fill);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, fill, buf.length - fill, base + fill);
      if (bytesRead === 0) break;
      fill += bytesRead;
      let pos = 0;
      for (;;) {
        const nl = buf.indexOf(10, pos);
        if (nl < 0 || nl >= fill) break;
        // The key: digits (optionally '-') up to the tab.
        let i = pos;
        let neg = false;
        if (buf[i] === 45) {
          neg = true;
          i++;
        }
        let key = 0;
        let c = buf[i];
        while (c >= 48 && c <= 57) {
          key = key * 10 + (c - 48);
          c = buf[++i];
        }
        if (c !== 9 || i === pos || i > nl)
          throw new Error(`${file}: line at byte ${base + pos} does not start with an integer key and a tab`);
        const tab = i;
        if (neg) key = -key;
        if (count === cap) {
          cap *= 2;
          const k = new Int32Array(cap);
          k.set(keys);
          keys = k;
          const o = new Float64Array(cap);
          o.set(offsets);
          offsets = o;
          const l = new Uint32Array(cap);
          l.set(lengths);
          lengths = l;
        }
        keys[count] = key;
        offsets[count] = base + tab + 1;
        lengths[count] = nl - tab - 1;
        count++;
        pos = nl + 1;
      }
      buf.copyWithin(0, pos, fill);
      fill -= pos;
      base += pos;
    }
  } finally {
    await fh.close();
  }
  if (fill) throw new Error(`${file}: last line has no newline`);
  return { count, keys, offsets, lengths };
}

/**
 * Orders the index by key (LSD radix sort, two 16-bit passes over the keys as
 * unsigned, carrying positions: linear time, no comparator calls) and checks
 * the keys are unique.
 */
function sortIndex(idx: PackedIndex, file: string): PackedIndex {
  const n = idx.count;
  let k = new Uint32Array(n);
  let p = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    k[i] = (idx.keys[i] ^ 0x80000000) >>> 0;
    p[i] = i;
    if (i && idx.keys[i] <= idx.keys[i - 1]) sorted = false;
  }
  if (!sorted) {
    let k2 = new Uint32Array(n);
    let p2 = new Uint32Array(n);
    for (const shift of [0, 16]) {
      const counts = new Uint32Array(65537);
      for (let i = 0; i < n; i++) counts[((k[i] >>> shift) & 0xffff) + 1]++;
      for (let d = 0; d < 65536; d++) counts[d + 1] += counts[d];
      for (let i = 0; i < n; i++) {
        const at = counts[(k[i] >>> shift) & 0xffff]++;
        k2[at] = k[i];
        p2[at] = p[i];
      }
      [k, k2] = [k2, k];
      [p, p2] = [p2, p];
    }
  }
  const keys = new Int32Array(n);
  const offsets = new Float64Array(n);
  const lengths = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const from = p[i];
    keys[i] = idx.keys[from];
    offsets[i] = idx.offsets[from];
    lengths[i] = idx.lengths[from];
    if (i && keys[i] === keys[i - 1]) throw new Error(`${file}: keys must be unique (${keys[i]} appears twice)`);
  }
  return { count: n, keys, offsets, lengths };
}

/** Values up to this size are read into one shared buffer; a longer one gets a buffer of its own. */
const SHARED_READ_MAX = 1 << 20;
let sharedRead = Buffer.allocUnsafeSlow(64 << 10);

/**
 * The buffer a value of `len` bytes is read into. Every read is a synchronous pread followed by a synchronous
 * decode, so one buffer shared by every store is never in use twice at once. Reusing it keeps a read from
 * allocating memory outside the JS heap: a fresh `Buffer.allocUnsafe` of a record over 4 KB (an identity record
 * is ~14 KB at full scale) is its own ArrayBuffer, and their churn made V8 start mark-compacts for external
 * memory pressure under load (issue 22: the warm p99 of the packed-store routes; docs/architecture.md, "No off-heap
 * memory per answer").
 */
function readBuffer(len: number): Buffer {
  if (len > SHARED_READ_MAX) return Buffer.allocUnsafe(len);
  if (len > sharedRead.length) {
    let size = sharedRead.length;
    while (size < len) size *= 2;
    sharedRead = Buffer.allocUnsafeSlow(size);
  }
  return sharedRead;
}

/** Read side of a packed store: the index in typed arrays, values read at their offset. */
export class PackedStore {
  private inFlight = 0;
  private closing: Promise<void> | null = null;
  private closeNow: (() => void) | null = null;

  private constructor(
    private readonly fh: FileHandle,
    private readonly keys: Int32Array,
    private readonly offsets: Float64Array,
    private readonly lengths: Uint32Array,
  ) {}

  /** Opens `<dir>/<name>.{tsv,idx}`: loads the index (16 bytes per record) and keeps the data file open. */
  static async open(dir: string, name: string): Promise<PackedStore> {
    const { data, index } = packedPaths(dir, name);
    const { keys, offsets, lengths } = await readPackedIndex(index);
    return new PackedStore(await open(data, 'r'), keys, offsets, lengths);
  }

  get size(): number {
    return this.keys.length;
  }

  /** Every key, ascending (a copy). */
  allKeys(): Int32Array {
    return this.keys.slice();
  }

  /** Position of `key` in the index, or -1. */
  private find(key: number): number {
    const k = this.keys;
    let lo = 0;
    let hi = k.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = k[mid];
      if (v < key) lo = mid + 1;
      else if (v > key) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  has(key: number): boolean {
    return Number.isInteger(key) && this.find(key) >= 0;
  }

  /** The value of `key` as UTF-8 text, or null when the key is absent. */
  async get(key: number): Promise<string | null> {
    return this.read(key);
  }

  /**
   * `get`, synchronously (the read is a synchronous pread either way): for a caller reading many records in one
   * pass, without a promise per record (issue 22: a carrier name search reads 40 per page).
   */
  read(key: number): string | null {
    if (!Number.isInteger(key)) return null;
    const i = this.find(key);
    if (i < 0) return null;
    if (this.closing) throw new Error('packed store is closed');
    const len = this.lengths[i]!;
    const buf = readBuffer(len);
    this.inFlight++;
    try {
      // A synchronous pread on the handle's descriptor, as a memory-mapped store (LMDB) reads: 4–5 µs of CPU for a
      // 5.8 KB value in the page cache, against 10–11 µs for fs.read and 14–17 µs for FileHandle.read (measured
      // with 64 reads in flight), and no trip through libuv's thread pool, which DuckDB's queries share. The cost is
      // that a page-cache miss holds the event loop for one disk read (a mapped store's page fault does the same).
      const bytesRead = readSync(this.fh.fd, buf, 0, len, this.offsets[i]!);
      if (bytesRead !== len) throw new Error(`packed store: short read at key ${key}`);
      return buf.toString('utf8', 0, len);
    } finally {
      this.inFlight--;
      if (this.inFlight === 0 && this.closeNow) this.closeNow();
    }
  }

  /** Closes the data file once in-flight reads finish; later `get` calls throw. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.closeNow = () => {
        this.closeNow = null;
        void this.fh.close().then(resolve, () => resolve());
      };
      if (this.inFlight === 0) this.closeNow();
    });
    return this.closing;
  }
}
