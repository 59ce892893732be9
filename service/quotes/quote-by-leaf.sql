-- A current quote bar by its leaf hash: quote_leaf_keys (sorted by the 60-bit key) gives the bar's key, then the full hash is checked.
-- Params: $leaf_key BIGINT, $leaf_hash VARCHAR. Columns: as quote-rows.sql.
SELECT b.ticker, b.adjustment, b.quote_date, b.open, b.high, b.low, b.close, b.volume, b.vwap, b.trade_count, b.flags, b.dataset,
       b.content_sha256, b.day_index, b.leaf_hash
FROM quote_leaf_keys k
JOIN quote_bars b ON b.ticker = k.ticker AND b.adjustment = k.adjustment AND b.quote_date = k.quote_date
WHERE k.leaf_key = $leaf_key AND b.leaf_hash = $leaf_hash
