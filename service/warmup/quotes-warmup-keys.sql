-- Warm-up keys of the quotes domain (service/warmup): a ticker that has bars.
-- Params: none.
-- Columns: ticker; NULL when no bars are served.
SELECT (SELECT ticker FROM quote_bars LIMIT 1) AS ticker
