-- A current quote bar by its leaf hash (ART on the 60-bit key, then the full hash).
-- Params: $leaf_key BIGINT, $leaf_hash VARCHAR. Columns: as quote-rows.sql.
SELECT ticker, adjustment, quote_date, open, high, low, close, volume, vwap, trade_count, flags, dataset,
       content_sha256, day_index, leaf_hash
FROM quote_bars WHERE leaf_key = $leaf_key AND leaf_hash = $leaf_hash
