-- Lookup keys of the quotes serving database. quote_bars and quote_leaf_keys are parquet-only (not in serving.duckdb):
-- quote_bars is sorted by (ticker, adjustment, quote_date), so per-ticker ranges are found by row-group statistics;
-- lookups by leaf hash go through quote_leaf_keys (each file sorted by leaf_key).
CREATE INDEX IF NOT EXISTS quote_leaf_history_hash_idx ON quote_leaf_history (leaf_hash);
