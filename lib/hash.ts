/**
 * The one canonical-JSON and SHA-256 helper of the project. Every hash that
 * leaves the process (origin leaves, receipts, vetting snapshots, custody
 * events, discovery contentHash) is computed here, so a change of algorithm
 * shows up as a diff in the golden tests (test/lib/hash.test.ts).
 *
 * Canonical JSON is RFC 8785 (JCS), produced by the `canonicalize` package:
 * object keys sorted by UTF-16 code units, no whitespace, numbers in the
 * ECMAScript shortest round-trip form, strings with minimal escaping.
 */
import { createHash, hash } from 'node:crypto';
import { open } from 'node:fs/promises';
import canonicalize from 'canonicalize';

/** RFC 8785 canonical JSON text of `value`. Throws on values JSON cannot carry (undefined at top level, NaN, Infinity, BigInt). */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'bigint') throw new TypeError('canonicalJson: BigInt cannot be represented in JSON');
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('canonicalJson: value has no JSON representation');
  return text;
}

/**
 * `canonicalJson` of a plain object some of whose member values were canonicalized before: `known` maps such a value
 * (by identity) to its canonical text. RFC 8785 §3.2.3 writes an object as its members in sorted key order, each
 * value in canonical form, so a known member's text is spliced in as it is: the result is byte-identical to
 * `canonicalJson(value)` (test/lib/hash.test.ts), and a large member hashed earlier is not serialized twice.
 */
export function canonicalJsonReusing(value: Record<string, unknown>, known: ReadonlyMap<object, string>): string {
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const v = value[key];
    if (v === undefined || typeof v === 'symbol') continue;
    const text = v !== null && typeof v === 'object' ? known.get(v) : undefined;
    parts.push(`${canonicalJson(key)}:${text ?? canonicalJson(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * Lower-case hex SHA-256 of a UTF-8 string or of raw bytes. One-shot `crypto.hash` (the digest `createHash` gives):
 * no Hash object, whose native handle every young collection has to process (issue 22: read paths hash per request).
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of `value`, hashed as UTF-8. */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Incremental SHA-256 for streams: feed chunks, read the hex digest and byte count at the end. */
export function createSha256Stream(): { update(chunk: Uint8Array | string): void; digest(): { sha256: string; bytes: number } } {
  const h = createHash('sha256');
  let bytes = 0;
  return {
    update(chunk) {
      h.update(chunk);
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    },
    digest: () => ({ sha256: h.digest('hex'), bytes }),
  };
}

/** Most bytes `hashFile` reads at a time. */
const HASH_FILE_CHUNK = 1 << 20;

/**
 * SHA-256 and size of a file's bytes (the digest `sha256Hex` gives of the whole file), read in chunks of at most
 * 1 MB into one buffer sized to the file. A file stream allocates a new buffer of its highWaterMark for every read,
 * the last one included: two 1 MB buffers for a 5 KB filing, which made a registry plan of 3,059 inputs allocate
 * 6 GB and spend a tenth of its run in allocation and GC.
 */
export async function hashFile(file: string): Promise<{ sha256: string; bytes: number }> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    // One byte past the size, so a file read whole is seen to end by the next read (0 bytes) without a second buffer.
    const buf = Buffer.allocUnsafe(Math.max(1, Math.min(HASH_FILE_CHUNK, size + 1)));
    const h = createSha256Stream();
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
    }
    return h.digest();
  } finally {
    await fh.close();
  }
}

/** True when `s` is a lower-case 64-hex SHA-256 digest. */
export function isSha256Hex(s: unknown): s is string {
  return typeof s === 'string' && /^[a-f0-9]{64}$/.test(s);
}
