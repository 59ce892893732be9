/**
 * The one writer of a fetched file and its `<file>.meta.json` sidecar, used by
 * every fetcher (EDGAR, Polygon, investor-relations sites, FMCSA exports).
 *
 * Contract: the bytes go to a temp file (its name carries the pid, so two
 * processes writing the same file never mix their bytes), the SHA-256 is taken
 * while writing, the sidecar is renamed into place first and the file last. So
 * whenever the file exists under its name it is complete and has a sidecar; a
 * process killed mid-download leaves only temp files, which no scan reads
 * (they end in `.tmp`). The last rename wins.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { createSha256Stream, hashFile } from '../lib/hash.ts';
import { readSidecar, type SourceMeta } from './inputs.ts';

export interface WrittenFile {
  file: string;
  sha256: string;
  bytes: number;
}

/**
 * Writes `body` (bytes, or a stream of chunks for large downloads: never held
 * whole in memory) to `file` with its sidecar. `meta` is the sidecar content,
 * or a function of the written file's SHA-256 and size (for streamed bodies,
 * whose hash is known only at the end). The sidecar is written as
 * `JSON.stringify(meta, null, 2)`, keys in the order given.
 */
export async function writeFetchedFile(
  file: string,
  body: Uint8Array | AsyncIterable<Uint8Array>,
  meta: SourceMeta | ((written: { sha256: string; bytes: number }) => SourceMeta),
): Promise<WrittenFile> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const metaTmp = `${file}.meta.json.${process.pid}.tmp`;
  const h = createSha256Stream();
  try {
    const out = createWriteStream(tmp);
    const chunks: AsyncIterable<Uint8Array> | Uint8Array[] = body instanceof Uint8Array ? [body] : body;
    try {
      for await (const chunk of chunks) {
        h.update(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if (!out.write(chunk)) await once(out, 'drain');
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
    const written = h.digest();
    const content = typeof meta === 'function' ? meta(written) : meta;
    await writeFile(metaTmp, JSON.stringify(content, null, 2));
    await rename(metaTmp, `${file}.meta.json`);
    await rename(tmp, file);
    return { file, ...written };
  } catch (e) {
    await rm(tmp, { force: true });
    await rm(metaTmp, { force: true });
    throw e;
  }
}

/** Removes a fetched file and its sidecar (the source no longer has it: never parse stale bytes as fresh). */
export async function removeFetchedFile(file: string): Promise<void> {
  await rm(file, { force: true });
  await rm(`${file}.meta.json`, { force: true });
}

/**
 * The sidecar of a fetched file when the file on disk is exactly what was
 * fetched (its SHA-256 equals the sidecar's `sha256`), else null. Used to skip
 * re-downloading immutable documents (an EDGAR filing never changes once
 * accepted) on a rerun.
 */
export async function readCompleteFetched(file: string): Promise<SourceMeta | null> {
  const meta = await readSidecar(file);
  if (!meta || typeof meta.sha256 !== 'string') return null;
  const hashed = await hashFile(file).catch(() => null);
  return hashed?.sha256 === meta.sha256 ? meta : null;
}

/**
 * Whether a fetched file is on disk whole: its sidecar exists and records the size the file has. The writer
 * (jobs/fetched-file.ts) renames a file into place only once complete, so this cheap check (no hashing of
 * multi-megabyte 10-Ks every night) suffices for planning.
 */
export async function isFetchedWhole(file: string): Promise<boolean> {
  const meta = await readSidecar(file);
  if (!meta) return false;
  const st = await stat(file).catch(() => null);
  return Boolean(st?.isFile()) && (typeof meta.bytes !== 'number' || meta.bytes === st!.size);
}
