-- The splits of a ticker by their record leaves (quote_corporate_actions, read from Polygon's /v3/reference/splits
-- files), with the reference file's fetch identity from sources. Params: $ticker VARCHAR.
-- Columns: origin_leaf_hash, ex_date (YYYY-MM-DD), split_from, split_to, dataset, file, content_sha256.
SELECT origin_leaf_hash, CAST(ex_date AS VARCHAR) AS ex_date, split_from, split_to, dataset, file, content_sha256
FROM quote_corporate_actions
WHERE ticker = $ticker AND action = 'split'
ORDER BY ex_date, origin_leaf_hash, file
