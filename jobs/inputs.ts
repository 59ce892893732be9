/**
 * Reading input files for processors: bytes plus the SourceRef that origin
 * leaves are built from. A fetcher that downloads a file writes a sidecar
 * `<file>.meta.json` ({source_url, retrieved_at, ...}); a file supplied locally
 * has none, so its leaf carries `retrieved_at: null` and the canonical URL the
 * parser derives. Local paths never enter a leaf, so the same bytes give the
 * same hashes on any machine.
 */
import { createReadStream } from 'node:fs';
import { open, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { createSha256Stream, hashCanonical, sha256Hex } from '../lib/hash.ts';
import type { IngestedSource } from '../lib/warehouse/staging.ts';

export interface SourceMeta {
  source_url?: string | null;
  retrieved_at?: string | null;
  [k: string]: unknown;
}

export async function readSidecar(file: string): Promise<SourceMeta | null> {
  try {
    return JSON.parse(await readFile(`${file}.meta.json`, 'utf8')) as SourceMeta;
  } catch {
    return null;
  }
}

/** Reads a whole (small or medium) input file and describes it as a source. */
export async function readInput(
  file: string,
  dataset: string,
  canonicalUrl: string | null = null,
): Promise<{ bytes: Buffer; src: IngestedSource; meta: SourceMeta | null }> {
  const bytes = await readFile(file);
  const meta = await readSidecar(file);
  return {
    bytes,
    meta,
    src: {
      source: dataset,
      source_url: meta?.source_url ?? canonicalUrl,
      retrieved_at: meta?.retrieved_at ?? null,
      content_sha256: sha256Hex(bytes),
      byte_size: bytes.byteLength,
      path: file,
    },
  };
}

/**
 * Describes a large input file as a source by streaming it through SHA-256 (no full read into memory). `onChunk`
 * sees each chunk of that one read, so a caller that also streams the file reads it once.
 */
export async function describeInput(
  file: string,
  dataset: string,
  canonicalUrl: string | null = null,
  onChunk?: (chunk: Buffer) => void | Promise<void>,
): Promise<IngestedSource> {
  const h = createSha256Stream();
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    h.update(chunk as Buffer);
    await onChunk?.(chunk as Buffer);
  }
  const { sha256, bytes } = h.digest();
  const meta = await readSidecar(file);
  return {
    source: dataset,
    source_url: meta?.source_url ?? canonicalUrl,
    retrieved_at: meta?.retrieved_at ?? null,
    content_sha256: sha256,
    byte_size: bytes,
    path: file,
  };
}

/** Lists files under `dir` (recursively) whose relative path matches `pattern`, sorted; sidecars excluded. */
export async function listInputs(dir: string, pattern: RegExp = /.*/): Promise<string[]> {
  const out: string[] = [];
  async function walk(d: string): Promise<void> {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && !e.name.endsWith('.meta.json') && pattern.test(path.relative(dir, p))) out.push(p);
    }
  }
  await walk(dir);
  return out.sort();
}

/**
 * A cheap digest of a set of inputs for skip-if-unchanged: relative path, size
 * and mtime of each file. Content hashes are taken when files are read.
 */
export async function digestInputs(dir: string, files: string[], extra: unknown = null): Promise<string> {
  const parts = [];
  for (const f of files) {
    const st = await stat(f);
    parts.push([path.relative(dir, f), st.size, Math.floor(st.mtimeMs)]);
  }
  return hashCanonical({ files: parts, extra });
}

/** Reads the first line of a file (a CSV header) without reading the rest; `maxBytes` bounds the line. */
export async function readFirstLine(file: string, maxBytes = 65536): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(maxBytes);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    const nl = text.indexOf('\n');
    return nl >= 0 ? text.slice(0, nl) : text;
  } finally {
    await fh.close();
  }
}
