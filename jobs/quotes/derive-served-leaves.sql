-- The served values and provenance of every stale split_dividend day (quote_split_adjustments status 'stale'), as
-- service/quotes/split-adjusted-days.sql gives them to the routes, for the leaf hash stored in served_leaf_hash.
-- Params: none. Columns: ticker, quote_date (YYYY-MM-DD), split_factor, adjusted prices (DECIMAL text), adjusted_volume,
-- adjusted_vwap, trade_count (the raw bar's), raw_leaf_hash, split_leaf_hashes, and the first split leaf's source_url,
-- retrieved_at, content_sha256 (origin_leaves).
SELECT a.ticker, CAST(a.quote_date AS VARCHAR) AS quote_date, a.split_factor,
       a.adjusted_open, a.adjusted_high, a.adjusted_low, a.adjusted_close, a.adjusted_volume,
       CAST(round(CAST(r.vwap AS DOUBLE) / a.split_factor, 6) AS DECIMAL(18,6)) AS adjusted_vwap, r.trade_count,
       a.raw_leaf_hash, a.split_leaf_hashes, l.source_url, l.retrieved_at, l.content_sha256, l.leaf_hash AS split_leaf
FROM quote_split_adjustments a
JOIN quote_bars r ON r.ticker = a.ticker AND r.adjustment = 'raw' AND r.quote_date = a.quote_date
LEFT JOIN (SELECT DISTINCT leaf_hash, source_url, retrieved_at, content_sha256 FROM origin_leaves) l ON l.leaf_hash = a.split_leaf_hashes[1]
WHERE a.status = 'stale'
