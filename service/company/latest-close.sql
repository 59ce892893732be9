-- The latest raw (as-traded) close of a ticker, for the identity card's market cap (quotes domain's quote_bars).
-- Params: $ticker VARCHAR. Columns: quote_date (YYYY-MM-DD), close (DOUBLE).
SELECT quote_date::VARCHAR AS quote_date, close::DOUBLE AS close
FROM quote_bars
WHERE ticker = $ticker AND adjustment = 'raw'
ORDER BY quote_date DESC
LIMIT 1
