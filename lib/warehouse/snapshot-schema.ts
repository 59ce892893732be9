/**
 * What tables and columns the current snapshot of a domain has, cached per
 * snapshot id. Search and stats read tables other families add over time
 * (people, products, partnerships, timeline events): they check here first
 * and skip what is absent instead of failing.
 */
import type { SnapshotReader } from './reader.ts';

export type SchemaMap = Map<string, Set<string>>;

const cache = new WeakMap<SnapshotReader, { snapshot: string; schema: Promise<SchemaMap> }>();

/** Tables → column names of the reader's current snapshot (empty when nothing is published). */
export function snapshotSchema(reader: SnapshotReader): Promise<SchemaMap> {
  const id = reader.manifest?.snapshot_id;
  if (!id) return Promise.resolve(new Map());
  const c = cache.get(reader);
  if (c && c.snapshot === id) return c.schema;
  const schema = reader
    .query(/* sql */ `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'`)
    .then((rows) => {
      const m: SchemaMap = new Map();
      for (const r of rows) {
        const t = String(r.table_name);
        if (!m.has(t)) m.set(t, new Set());
        m.get(t)!.add(String(r.column_name));
      }
      return m;
    });
  cache.set(reader, { snapshot: id, schema });
  schema.catch(() => cache.delete(reader));
  return schema;
}
