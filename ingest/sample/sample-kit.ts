/**
 * Building blocks of the deterministic sample-data generator. Generators are
 * pure: they yield `SampleFile`s (a relative path and content) in the exact
 * formats of the real sources; `jobs/sample.ts` writes them to disk. The same
 * scale and seed always give byte-identical files.
 */

export type SampleScale = 'small' | 'medium' | 'full';

export interface SampleFile {
  /** Path relative to the sample root, e.g. `sec/submissions/CIK0000320193.json`. */
  path: string;
  /** Whole content, or chunks for large files (streamed to disk). */
  content: string | Uint8Array | AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>;
}

export interface SampleOptions {
  scale: SampleScale;
  seed: number;
}

export interface SampleGenerator {
  /** Short name shown in progress output (`edgar`, `fmcsa`, ...). */
  name: string;
  generate(opts: SampleOptions): AsyncIterable<SampleFile> | Iterable<SampleFile>;
}

/** A small, fast, seedable PRNG (mulberry32). Deterministic across platforms. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = (seed >>> 0) ^ 0x9e3779b9;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  /** Picks by weight: `weighted([['a', 3], ['b', 1]])`. */
  weighted<T>(pairs: ReadonlyArray<readonly [T, number]>): T {
    const total = pairs.reduce((a, [, w]) => a + w, 0);
    let r = this.next() * total;
    for (const [v, w] of pairs) if ((r -= w) < 0) return v;
    return pairs[pairs.length - 1][0];
  }
  /** Approximately normal (Irwin-Hall of 6). */
  normal(mean = 0, sd = 1): number {
    let s = 0;
    for (let i = 0; i < 6; i++) s += this.next();
    return mean + (s - 3) * sd * Math.SQRT2;
  }
  /** A child generator with its own stream, so adding draws in one place does not shift another. */
  fork(label: string): Rng {
    let h = this.state;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 2654435761) >>> 0;
    return new Rng(h);
  }
}

/** Formats a Date as YYYY-MM-DD (UTC). */
export function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Adds days to a YYYY-MM-DD date. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return isoDate(d);
}

/** Fixed "today" of the sample world, so generated data never depends on the clock. */
export const SAMPLE_TODAY = '2026-11-20';
