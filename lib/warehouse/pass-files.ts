/**
 * Passes over key ranges of a big source without a scan of the whole source per pass (issue 22 item 4). A packed
 * store whose values aggregate many rows per key is written in passes (DuckDB cannot spill list/string_agg
 * states), and a pass that filters the source by its key range reads all of it: at full scale the FMCSA crash
 * stores' 24 passes each read the 3.6 M crash rows. Here the source is written once into one parquet file per pass.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from './duckdb.ts';

/**
 * The passes of a packed store's write over `table` (a table or a parenthesised subquery) without reading the whole table once per pass (issue 22 item 4: at full
 * scale the crash stores' 24 passes each scanned the 3.6 M crash rows and hashed every VIN again, 61 s of CPU).
 * With more than one pass, the rows with a non-null `key` are first written once into one parquet file per pass
 * (COPY … PARTITION_BY, a single scan, the key computed once per row) under `dir`; the sequence then gives, for
 * each pass in turn, a FROM item reading only that pass's rows (`table` itself when there is one pass). The files
 * are removed when the sequence ends. Memory: the partitioned write keeps one small
 * row group per open file.
 */
export async function* bucketedPasses(
  conn: DuckDBConnection,
  dir: string,
  table: string,
  key: string,
  cuts: number[],
): AsyncIterable<string> {
  if (cuts.length === 0) {
    yield table;
    return;
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  try {
    const bucket = `CASE ${cuts.map((c, i) => `WHEN _pass_key <= ${c} THEN ${i}`).join(' ')} ELSE ${cuts.length} END`;
    const [order] = (await conn.runAndReadAll(`SELECT current_setting('preserve_insertion_order')::BOOLEAN`)).getRows();
    await conn.run(`SET preserve_insertion_order = false`);
    try {
      await conn.run(
        `COPY (SELECT * EXCLUDE (_pass_key), ${bucket} AS _pass FROM (SELECT *, ${key} AS _pass_key FROM ${table}) WHERE _pass_key IS NOT NULL)
         TO ${quoteLiteral(dir)} (FORMAT parquet, PARTITION_BY (_pass), ROW_GROUP_SIZE 16384, OVERWRITE_OR_IGNORE)`,
      );
    } finally {
      await conn.run(`SET preserve_insertion_order = ${order?.[0] === false ? 'false' : 'true'}`);
    }
    for (let i = 0; i <= cuts.length; i++) {
      const files = path.join(dir, `_pass=${i}`, '*.parquet');
      // A pass whose range holds no row (distinct cuts never leave one empty, but be safe) has no directory.
      if (!existsSync(path.join(dir, `_pass=${i}`))) continue;
      yield `(SELECT * FROM read_parquet(${quoteLiteral(files)}, hive_partitioning = false))`;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    // The parent (a run's scratch folder for such files) goes too once empty: nothing of it is published.
    await rmdir(path.dirname(dir)).catch(() => undefined);
  }
}

/** `each` of every SELECT source of `passes`, in turn (lazily: a pass's files exist only while it runs). */
export async function* mapPasses(passes: AsyncIterable<string>, each: (source: string) => string): AsyncIterable<string> {
  for await (const src of passes) yield each(src);
}

/**
 * The passes over `table` by range predicates (`ranges`, each a filter on the table's own columns), as FROM items:
 * for a key the table's files are ordered by (the FMCSA files are in DOT order), the filter is pushed into the
 * parquet scan and the row groups' min/max skip all but the pass's own, so no copy is needed (a partitioned copy
 * of the 5 M inspection rows cost more CPU than it saved at full scale).
 */
export async function* rangePasses(table: string, ranges: readonly string[]): AsyncIterable<string> {
  for (const r of ranges) yield r === 'true' ? table : `(SELECT * FROM ${table} WHERE ${r})`;
}
