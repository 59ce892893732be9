-- The stale split_dividend day whose served quote_split_adjusted leaf has this hash (quote_split_adjustments, filled
-- at publish). Params: $leaf_hash VARCHAR. Columns: ticker, quote_date (YYYY-MM-DD).
SELECT ticker, CAST(quote_date AS VARCHAR) AS quote_date
FROM quote_split_adjustments WHERE served_leaf_hash = $leaf_hash
LIMIT 1
