/**
 * The packed registry_signals store (issue 22 item 2: `/api/signals?ticker=` and `sec_signals` without a DuckDB
 * query per request): per ticker, every signal hit list-signals.sql answers for that ticker alone (strength >= 1,
 * its columns and origin, in its order), keyed by `textKey(ticker)` (lib/warehouse/packed-store.ts): a record is
 * the JSON array [[ticker, [row, …]], …] of the tickers sharing its key. The route filters a ticker's rows by type
 * and minimum strength in memory and pages them (service/registry-layers/registry-layers.queries.ts). Rewritten at
 * every publish (signal_hits is rewritten by every derive), in passes over key ranges so that the list states,
 * which DuckDB cannot spill, stay bounded.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { queryRows } from '../../lib/warehouse/duckdb.ts';
import { textKeySql } from '../../lib/warehouse/packed-store.ts';
import type { DeriveContext } from '../../lib/warehouse/publish.ts';

/** Store name (read by service/registry-layers). */
export const REGISTRY_SIGNALS = 'registry_signals';

/** Hits aggregated per pass (a hit's JSON is a few hundred bytes, its evidence sentence included). Tests lower it. */
export const signalPasses = { hits: 200_000 };

/** list-signals.sql's columns as json_array values (INTEGER, VARCHAR and DATE render as the row reader gives them). */
const ROW = `json_array(h.ticker, h.exchange, h.cik, h.company_name, h.signal_type, h.strength, h.section, h.evidence,
  h.accession, h.filing_date, h.pattern_id, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256',
  canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at,
  content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent)))`;
/** list-signals.sql's order. */
const ORDER = 'h.strength DESC, h.filing_date DESC NULLS LAST, h.ticker, h.section, h.signal_type, h.accession, h.pattern_id, h.evidence';
/** The key range [lo, hi) of a pass: 28-bit text keys split evenly. */
const KEY_SPACE = 2 ** 28;

function passSql(lo: number, hi: number): string {
  return `SELECT k, to_json(list(json_array(ticker, rows) ORDER BY ticker))::VARCHAR AS v
    FROM (
      SELECT ${textKeySql('h.ticker')} AS k, h.ticker, to_json(list(${ROW} ORDER BY ${ORDER})) AS rows
      FROM signal_hits h LEFT JOIN origin_leaves o ON o.leaf_hash = h.origin_leaf_hash
      WHERE h.ticker IS NOT NULL AND h.strength >= 1 AND ${textKeySql('h.ticker')} >= ${lo} AND ${textKeySql('h.ticker')} < ${hi}
      GROUP BY h.ticker
    )
    GROUP BY k`;
}

/** Writes registry_signals from signal_hits and origin_leaves (both final). */
export async function writeSignalsPacked(conn: DuckDBConnection, ctx: DeriveContext): Promise<void> {
  const [{ n }] = await queryRows(conn, `SELECT count(*)::BIGINT AS n FROM signal_hits`);
  const passes = Math.max(1, Math.ceil(Number(n) / signalPasses.hits));
  const step = Math.ceil(KEY_SPACE / passes);
  const selects: string[] = [];
  for (let lo = 0; lo < KEY_SPACE; lo += step) selects.push(passSql(lo, Math.min(KEY_SPACE, lo + step)));
  await ctx.writePacked(REGISTRY_SIGNALS, selects);
}
