-- Fast path of the quotes derive: the served table straight from the children's per-file folds
-- (jobs/quotes/quotes-fold.ts: flags, day_index and leaf hashes computed per file; final when no chain spans files).
-- Params: none. Reads TEMP VIEW quote_bar_folds (the fold parts, in key order). Writes quote_bars; quote_leaf_keys is
-- filled by derive-leaf-keys.sql.
DELETE FROM quote_bars;
INSERT INTO quote_bars
SELECT ticker, adjustment, quote_date, open, high, low, close, volume, vwap, trade_count, flags,
  dataset, content_sha256, day_index, leaf_hash, leaf_key
FROM quote_bar_folds;
DELETE FROM quote_leaf_keys;
