-- Every bar of a ticker in chain order, for verification. Params: $ticker VARCHAR.
SELECT ticker, adjustment, quote_date, open, high, low, close, volume, vwap, trade_count, dataset, content_sha256,
       day_index, leaf_hash
FROM quote_bars WHERE ticker = $ticker
ORDER BY adjustment, quote_date
