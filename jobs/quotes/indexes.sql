-- Lookup keys of the quotes serving database. quote_bars is sorted by (ticker, adjustment, quote_date), so
-- per-ticker ranges are served by zone maps; lookups by leaf hash go through quote_leaf_keys (sorted by leaf_key).
CREATE INDEX IF NOT EXISTS quote_leaf_history_hash_idx ON quote_leaf_history (leaf_hash);
