/**
 * Writes the deterministic sample data set (`npm run sample -- --scale small --seed 42`).
 * Generators live beside their parsers in ingest/ and are pure; this module
 * does the I/O: atomic writes, a fixed mtime (so input digests are stable
 * across regenerations) and a `.complete` marker written last, so an
 * interrupted generation is redone, never half-used.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { edgarSampleGenerator } from '../ingest/edgar/edgar.sample.ts';
import { fmcsaSampleGenerator } from '../ingest/fmcsa/fmcsa.sample.ts';
import type { SampleFile, SampleGenerator, SampleOptions } from '../ingest/sample/sample-kit.ts';
import { quotesSampleGenerator } from '../ingest/quotes/quotes.sample.ts';
import { transcriptsSampleGenerator } from '../ingest/transcripts/transcripts.sample.ts';

/** Every sample generator; each capability adds its own formats here. */
export const sampleGenerators: SampleGenerator[] = [
  edgarSampleGenerator,
  fmcsaSampleGenerator,
  quotesSampleGenerator,
  transcriptsSampleGenerator,
];

/** Files get this mtime so `digestInputs` is stable across regenerations. */
const FIXED_MTIME = new Date('2026-11-20T00:00:00Z');
/** Bump when any generator's output changes, so existing samples are regenerated. */
export const SAMPLE_FORMAT_VERSION = 4;

export interface SampleReport {
  dir: string;
  files: number;
  bytes: number;
  generated: boolean;
}

async function writeSampleFile(root: string, f: SampleFile): Promise<number> {
  const target = path.join(root, f.path);
  if (path.relative(root, target).startsWith('..')) throw new Error(`sample path escapes root: ${f.path}`);
  await mkdir(path.dirname(target), { recursive: true });
  const tmp = `${target}.tmp`;
  let bytes = 0;
  if (typeof f.content === 'string' || f.content instanceof Uint8Array) {
    await writeFile(tmp, f.content);
    bytes = typeof f.content === 'string' ? Buffer.byteLength(f.content) : f.content.byteLength;
  } else {
    const out = createWriteStream(tmp, { highWaterMark: 1 << 20 });
    for await (const chunk of f.content as AsyncIterable<string | Uint8Array>) {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
  }
  await rename(tmp, target);
  await utimes(target, FIXED_MTIME, FIXED_MTIME);
  return bytes;
}

/**
 * Generates the sample into `dir` unless a complete sample of the same scale,
 * seed and format version is already there.
 */
export async function ensureSample(
  dir: string,
  opts: SampleOptions & { force?: boolean; generators?: SampleGenerator[]; onFile?: (gen: string, file: string, n: number) => void },
): Promise<SampleReport> {
  const marker = path.join(dir, '.complete');
  const want = JSON.stringify({ scale: opts.scale, seed: opts.seed, version: SAMPLE_FORMAT_VERSION });
  if (!opts.force) {
    const have = await readFile(marker, 'utf8').catch(() => null);
    if (have?.trim() === want) return { dir, files: 0, bytes: 0, generated: false };
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  let files = 0;
  let bytes = 0;
  for (const gen of opts.generators ?? sampleGenerators) {
    for await (const f of gen.generate(opts)) {
      bytes += await writeSampleFile(dir, f);
      files++;
      opts.onFile?.(gen.name, f.path, files);
    }
  }
  await writeFile(marker, want + '\n');
  return { dir, files, bytes, generated: true };
}
