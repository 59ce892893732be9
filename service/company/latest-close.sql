-- The latest raw (as-traded) close of a ticker, for the identity card's market cap (quotes domain's quote_bars).
-- Only for a quotes snapshot without the chain heads store (lib/quote-heads.ts), which answers it without this scan.
-- Params: $ticker VARCHAR. Columns: quote_date (YYYY-MM-DD), close (DOUBLE).
SELECT quote_date::VARCHAR AS quote_date, close::DOUBLE AS close
FROM quote_bars
WHERE ticker = $ticker AND adjustment = 'raw'
ORDER BY quote_date DESC
LIMIT 1
