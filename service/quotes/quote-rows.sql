-- Bars of one ticker+adjustment chain, newest first, from a date down (the parent of row i is row i+1).
-- Params: $ticker VARCHAR, $adjustment VARCHAR, $to DATE (inclusive upper bound), $from DATE (nullable lower bound),
--         $limit INTEGER. Columns: every quote_bars column (prices as DECIMAL text), quote_date as YYYY-MM-DD.
SELECT ticker, adjustment, quote_date, open, high, low, close, volume, vwap, trade_count, flags, dataset,
       content_sha256, day_index, leaf_hash
FROM quote_bars
WHERE ticker = $ticker AND adjustment = $adjustment AND quote_date <= $to
  AND ($from IS NULL OR quote_date >= $from)
ORDER BY quote_date DESC
LIMIT $limit
