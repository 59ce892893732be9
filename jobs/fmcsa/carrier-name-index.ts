/**
 * The carrier search's name index, built at FMCSA publish (issue 22: `/api/carriers?name=` without a scan of every
 * name): derive-carrier-name-terms.sql writes the terms of every carrier's legal and DBA name in (term, answer
 * order), derive-carrier-name-dict.sql their dictionary. Both are parquet-only tables in small row groups, so a
 * query reads the row groups of its terms alone (service/carriers/search-carriers-by-term.sql).
 */
import { loadSql } from '../../lib/warehouse/duckdb.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Parquet-only tables of the index (listed in the fmcsa domain's tables and parquet tables). */
export const CARRIER_NAME_INDEX_TABLES = ['carrier_name_terms', 'carrier_name_dict'] as const;

/** Rows per row group: a term's range spans few groups, and a group decodes quickly. */
const ROW_GROUP_SIZE = 16_384;

/** Writes carrier_name_terms from the carriers table, then carrier_name_dict from it. */
export async function deriveCarrierNameIndex(ctx: DeriveContext): Promise<void> {
  const opts = { columns: 'query', rowGroupSize: ROW_GROUP_SIZE } as const;
  await ctx.replaceParquetTable('carrier_name_terms', loadSql('./derive-carrier-name-terms.sql', import.meta.url), opts);
  await ctx.replaceParquetTable('carrier_name_dict', loadSql('./derive-carrier-name-dict.sql', import.meta.url), opts);
}
