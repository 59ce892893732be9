/**
 * A warehouse domain: a set of tables published together as one snapshot.
 * Domains are independent (registry, quotes, transcripts, fmcsa), so a nightly
 * quotes run never rewrites the carrier tables. Each domain owns its DDL and
 * its index DDL (`.sql` files beside its jobs); the common tables (sources,
 * rejects, origin_leaves) are added to every domain.
 */
import { readFileSync } from 'node:fs';

export interface DomainSpec {
  /** Name used in paths and as the SQL schema in `npm run sql`. */
  domain: string;
  /** CREATE TABLE statements (IF NOT EXISTS) for the domain's own tables. */
  tablesSql: string;
  /** CREATE INDEX statements applied to the serving database after loading. */
  indexesSql?: string;
  /**
   * Tables rebuilt from scratch by every run. Other tables are carried forward
   * from the previous snapshot when a run writes no parts for them (incremental runs).
   */
  replaceTables?: string[];
  /**
   * Parquet-only tables: big tables whose parts ARE the published table files.
   * Publish hard-links each part into the snapshot's `tables/` (one part:
   * `<table>.parquet`; several: the directory `<table>/`), never copies them
   * into serving.duckdb, and hashes each file; `derive` and every reader see
   * them through views over read_parquet. A part whose columns differ from the
   * table's DDL (names, order or types) is rewritten once to the DDL. Not for
   * the common tables (sources, rejects, origin_leaves).
   */
  parquetTables?: string[];
}

const COMMON_TABLES_SQL = readFileSync(new URL('./common-tables.sql', import.meta.url), 'utf8');
const COMMON_INDEXES_SQL = readFileSync(new URL('./common-indexes.sql', import.meta.url), 'utf8');

/** Full DDL of a domain: common tables first, then the domain's own. */
export function domainTablesSql(spec: DomainSpec): string {
  return `${COMMON_TABLES_SQL}\n${spec.tablesSql}`;
}
export function domainIndexesSql(spec: DomainSpec): string {
  return `${COMMON_INDEXES_SQL}\n${spec.indexesSql ?? ''}`;
}

/** Reads a domain spec's SQL files relative to a module URL. */
export function defineDomain(opts: {
  domain: string;
  tables: string;
  indexes?: string;
  base: string;
  replaceTables?: string[];
  parquetTables?: string[];
}): DomainSpec {
  const common = ['sources', 'rejects', 'origin_leaves'];
  const bad = (opts.parquetTables ?? []).filter((t) => common.includes(t));
  if (bad.length) throw new Error(`${opts.domain}: common tables cannot be parquet-only (${bad.join(', ')})`);
  return {
    domain: opts.domain,
    tablesSql: readFileSync(new URL(opts.tables, opts.base), 'utf8'),
    indexesSql: opts.indexes ? readFileSync(new URL(opts.indexes, opts.base), 'utf8') : undefined,
    replaceTables: opts.replaceTables,
    parquetTables: opts.parquetTables,
  };
}
