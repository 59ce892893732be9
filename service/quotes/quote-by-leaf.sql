-- Where a current quote bar with this leaf key is: quote_leaf_keys (parquet, each file sorted by the 60-bit key, so
-- row-group statistics skip all but one small group per file). The caller reads the bar by its key and checks the
-- full hash (several bars may share a 60-bit key). Params: $leaf_key BIGINT.
-- Columns: ticker, adjustment, quote_date (YYYY-MM-DD).
SELECT ticker, adjustment, CAST(quote_date AS VARCHAR) AS quote_date
FROM quote_leaf_keys
WHERE leaf_key = $leaf_key
ORDER BY ticker, adjustment, quote_date
