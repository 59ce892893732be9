/**
 * The carrier search's name index, built at FMCSA publish (issue 22: `/api/carriers?name=` without a scan of every
 * name): derive-carrier-name-terms.sql writes the terms of every carrier's legal and DBA name in (term, answer
 * order), derive-carrier-name-dict.sql their dictionary. Both are parquet-only tables in small row groups, so a
 * query reads the row groups of its terms alone (service/carriers/search-carriers-by-term.sql).
 */
import { hashCanonical } from '../../lib/hash.ts';
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Parquet-only tables of the index (listed in the fmcsa domain's tables and parquet tables). */
export const CARRIER_NAME_INDEX_TABLES = ['carrier_name_terms', 'carrier_name_dict'] as const;

/** Rows per row group: a term's range spans few groups, and a group decodes quickly. */
const ROW_GROUP_SIZE = 16_384;

const TERMS_SQL = loadSql('./derive-carrier-name-terms.sql', import.meta.url);
const DICT_SQL = loadSql('./derive-carrier-name-dict.sql', import.meta.url);

/**
 * What the index is computed by (its SQL and row-group size): a previous snapshot's index over the same carriers
 * rows is reused only when its stamp equals this one, so a change of the SQL rebuilds it without a version bump.
 */
export const CARRIER_NAME_INDEX_STAMP = hashCanonical({ terms: TERMS_SQL, dict: DICT_SQL, row_group_size: ROW_GROUP_SIZE });

/** Writes carrier_name_terms from the carriers table, then carrier_name_dict from it. */
export async function deriveCarrierNameIndex(ctx: DeriveContext): Promise<void> {
  const opts = { columns: 'query', rowGroupSize: ROW_GROUP_SIZE } as const;
  await ctx.replaceParquetTable('carrier_name_terms', TERMS_SQL, opts);
  await ctx.replaceParquetTable('carrier_name_dict', DICT_SQL, opts);
}

/**
 * Links both tables from the previous snapshot (its carriers rows being this run's, and its stamp this one):
 * true when both were linked. A half-linked index never stays: the caller derives both again on false.
 */
export async function linkPreviousCarrierNameIndex(ctx: DeriveContext): Promise<boolean> {
  for (const t of CARRIER_NAME_INDEX_TABLES) if (!(await ctx.linkPreviousParquetTable(t))) return false;
  return true;
}
