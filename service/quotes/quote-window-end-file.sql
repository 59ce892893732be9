-- quote-window-end.sql over the one quote_bars file holding the chain ($file, from the chain heads store).
-- Params: $file VARCHAR (absolute path), $ticker VARCHAR, $adjustment VARCHAR, $from DATE, $offset INTEGER.
-- Columns: quote_date.
SELECT quote_date FROM read_parquet($file)
WHERE ticker = $ticker AND adjustment = $adjustment AND quote_date >= $from
ORDER BY quote_date
LIMIT 1 OFFSET $offset
