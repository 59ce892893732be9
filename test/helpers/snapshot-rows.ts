/**
 * Comparing published snapshots row by row (incremental-run tests, issue 18 item 6): an incremental snapshot must
 * hold, table by table, the rows a full run over the same inputs publishes.
 */
import { expect } from 'vitest';
import { SnapshotReader } from '../../lib/warehouse/reader.ts';
import { readCurrentManifest } from '../../lib/warehouse/snapshot.ts';

/** Columns that name the run or the ingest time, not the data. */
export const VOLATILE_COLUMNS = ['run_id', 'first_run_id', 'ingested_at'];
/** Cumulative tables (every run's sources and leaves are kept) differ by design between a chain of runs and one run. */
export const CUMULATIVE_TABLES = ['sources', 'origin_leaves'];

/**
 * Every table of the domain's current snapshot (cumulative ones left out): its rows as sorted JSON lines, volatile
 * columns dropped. `opts` replaces the defaults for a domain whose run history shows elsewhere (quotes: a
 * `recorded_run_id` column, and `origin_leaves` compared since its leaves are per bar, not per run); `packed` adds
 * the snapshot's packed record stores.
 */
export async function publishedRows(
  dataDir: string,
  domain: string,
  opts: { volatile?: string[]; cumulative?: string[]; packed?: boolean } = {},
): Promise<Record<string, string[]>> {
  const volatile = opts.volatile ?? VOLATILE_COLUMNS;
  const cumulative = opts.cumulative ?? CUMULATIVE_TABLES;
  const manifest = await readCurrentManifest(dataDir, domain);
  if (!manifest) throw new Error(`${domain} has no published snapshot in ${dataDir}`);
  const reader = await SnapshotReader.open(dataDir, domain, { poolSize: 1 });
  try {
    const out: Record<string, string[]> = {};
    for (const t of Object.keys(manifest.tables).filter((t) => !cumulative.includes(t))) {
      const rows = await reader.query(`SELECT * FROM ${t}`);
      out[t] = rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !volatile.includes(k))))).sort();
    }
    // `packed`: every packed record store too, as `packed:<name>`, one `<key>\t<value>` line per record.
    if (opts.packed)
      // The leaf store holds the cumulative origin_leaves (compared as that table is: not).
      for (const name of Object.keys(manifest.packed ?? {}).filter((n) => !cumulative.includes(n))) {
        const store = reader.packed(name)!;
        const lines: string[] = [];
        for (const k of store.allKeys()) lines.push(`${k}\t${await store.get(k)}`);
        out[`packed:${name}`] = lines.sort();
      }
    return out;
  } finally {
    await reader.close();
  }
}

/** Table by table, so a failure names the table and shows the differing rows. */
export function expectSameRows(actual: Record<string, string[]>, expected: Record<string, string[]>): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const t of Object.keys(expected)) expect(actual[t], `table ${t}`).toEqual(expected[t]);
}
