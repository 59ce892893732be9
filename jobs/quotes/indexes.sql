-- Lookup keys of the quotes serving database. quote_bars is sorted by (ticker, adjustment, quote_date), so
-- per-ticker ranges are served by zone maps; lookups by leaf hash use the small BIGINT key.
CREATE INDEX IF NOT EXISTS quote_bars_leaf_key_idx ON quote_bars (leaf_key);
CREATE INDEX IF NOT EXISTS quote_leaf_history_hash_idx ON quote_leaf_history (leaf_hash);
