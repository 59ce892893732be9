/**
 * The registry's packed per-company stores (issue 22): one JSON record per CIK holding every row a company route
 * reads (service/registry-layers: earnings, filings, timeline, people, profile facts and metrics), with the same
 * columns, order and origin leaves as the route's SQL, so an answer reads one record (a binary search and one
 * positioned read, lib/warehouse/packed-store.ts) instead of running 2-4 DuckDB queries. Written at publish after
 * the derive; on a delta publish only the changed CIKs' records are computed and the rest copied as bytes from the
 * previous snapshot's stores; with nothing changed the stores are hard-linked. Every record depends only on rows of
 * its own CIK (and their origin leaves), which is what the delta publish's key set tracks.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { loadSql, queryRows } from '../../lib/warehouse/duckdb.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Store name → its SELECT (columns k = cik, v = JSON text). Names are read by service/registry-layers. */
export const REGISTRY_PACKED: Record<string, string> = {
  registry_earnings: loadSql('./packed-earnings.sql', import.meta.url),
  registry_filings: loadSql('./packed-filings.sql', import.meta.url),
  registry_timeline: loadSql('./packed-timeline.sql', import.meta.url),
  registry_people: loadSql('./packed-people.sql', import.meta.url),
  registry_profile: loadSql('./packed-profile.sql', import.meta.url),
};

/** Writes (full publish), merges (delta publish) or links (delta publish with nothing changed) every registry store. */
export async function writeRegistryPacked(conn: DuckDBConnection, ctx: DeriveContext): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  const delta = ctx.delta;
  for (const [name, select] of Object.entries(REGISTRY_PACKED)) {
    const t = Date.now();
    if (!delta) await ctx.writePacked(name, select);
    else if (delta.changed.size === 0 && (await ctx.linkPreviousPacked(name))) timings[`${name}_linked`] = 1;
    else {
      const keys = new Set(
        (await queryRows(conn, `SELECT DISTINCT k FROM ${delta.keysTable} WHERE k IS NOT NULL`)).map((r) => Number(r.k)),
      );
      await ctx.writePackedDelta(name, `SELECT * FROM (${select}) WHERE k IN (SELECT k FROM ${delta.keysTable})`, keys, select);
    }
    timings[name] = Date.now() - t;
  }
  return timings;
}
