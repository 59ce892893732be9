-- Stale adjusted bars of a ticker, re-derived from the raw bar and the splits after it (quote_split_adjustments,
-- written at publish by jobs/quotes/derive-split-adjustments.sql): the days in [$from, $to] whose stored
-- split_dividend bar predates a split (status 'stale'). Each row carries the split-adjusted values (vwap: raw ÷ factor,
-- trade count: the raw bar's, unchanged by a split) and the raw bar's columns plus the leaf hash of the raw bar before
-- it, so the caller rebuilds and checks the raw bar's chained leaf.
-- Params: $ticker VARCHAR, $from DATE, $to DATE. Columns: see SELECT (prices as DECIMAL text, dates YYYY-MM-DD).
WITH raw AS (
  SELECT quote_date, open, high, low, close, volume, vwap, trade_count, dataset, content_sha256, day_index, leaf_hash,
         lag(leaf_hash) OVER (ORDER BY quote_date) AS prev_leaf_hash
  FROM quote_bars
  WHERE ticker = $ticker AND adjustment = 'raw' AND quote_date <= $to
)
SELECT CAST(a.quote_date AS VARCHAR) AS quote_date, a.split_factor, a.status,
       a.adjusted_open, a.adjusted_high, a.adjusted_low, a.adjusted_close, a.adjusted_volume,
       CAST(round(CAST(r.vwap AS DOUBLE) / a.split_factor, 6) AS DECIMAL(18,6)) AS adjusted_vwap,
       a.stored_adjusted_close, a.stored_leaf_hash, a.raw_leaf_hash, a.split_leaf_hashes,
       $ticker AS ticker, 'raw' AS adjustment, r.open, r.high, r.low, r.close, r.volume, r.vwap, r.trade_count,
       r.dataset, r.content_sha256, r.day_index, r.leaf_hash, r.prev_leaf_hash
FROM quote_split_adjustments a
JOIN raw r ON r.quote_date = a.quote_date
WHERE a.ticker = $ticker AND a.status = 'stale' AND a.quote_date BETWEEN $from AND $to
ORDER BY a.quote_date DESC
