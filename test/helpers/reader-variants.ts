/**
 * Variants of a snapshot reader for the packed-store tests (issue 22): the same reader without its packed stores
 * (the routes take their SQL path), the same reader counting the DuckDB queries run through it, and one text for
 * an answer or its error, so that both paths compare byte for byte.
 */
import type { SnapshotReader } from '../../lib/warehouse/reader.ts';

/** The same reader without its packed stores: the routes take their SQL path. */
export function sqlOnly(reader: SnapshotReader): SnapshotReader {
  const r = Object.create(reader) as SnapshotReader;
  Object.defineProperty(r, 'packed', { value: () => null });
  return r;
}

/** The reader, counting the DuckDB queries run through it. */
export function counting(reader: SnapshotReader): { reader: SnapshotReader; count: () => number } {
  let n = 0;
  const r = Object.create(reader) as SnapshotReader;
  Object.defineProperty(r, 'query', {
    value: (sql: string, p?: Record<string, never>) => {
      n++;
      return reader.query(sql, p);
    },
  });
  return { reader: r, count: () => n };
}

/** The answer as JSON text, or the error with its served fields (`context`, which holds the 4xx body's extras). */
export async function answer(f: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await f());
  } catch (e) {
    const err = e as Error & { context?: unknown };
    return `error ${err.name}: ${err.message} ${JSON.stringify(err.context ?? null)}`;
  }
}
