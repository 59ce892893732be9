-- Key 0 of the chain heads store `quote_heads` (derive-heads.sql writes the other keys): the JSON array of every
-- ticker, in key order. Reads TEMP TABLE quote_heads_keys (k, ticker), made by writeQuoteHeads. Params: none.
-- Columns: k (INTEGER key), v (JSON text).
SELECT 0 AS k, coalesce(to_json(list(ticker ORDER BY k)), '[]')::VARCHAR AS v FROM quote_heads_keys
