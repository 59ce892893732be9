-- quote-rows.sql over the one quote_bars file holding the chain ($file, named by the chain heads store,
-- lib/quote-heads.ts): only that file's footer and row groups are read, not the table's (issue 22).
-- Params: $file VARCHAR (absolute path), $ticker VARCHAR, $adjustment VARCHAR, $to DATE (inclusive upper bound),
--         $from DATE (nullable lower bound), $limit INTEGER. Columns: quote-rows.sql's.
SELECT ticker, adjustment, quote_date, open, high, low, close, volume, vwap, trade_count, flags, dataset,
       content_sha256, day_index, leaf_hash
FROM read_parquet($file)
WHERE ticker = $ticker AND adjustment = $adjustment AND quote_date <= $to
  AND ($from IS NULL OR quote_date >= $from)
ORDER BY quote_date DESC
LIMIT $limit
