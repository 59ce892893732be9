-- Last date of a window of $limit trading days starting at $from (NULL when fewer days remain).
-- Params: $ticker VARCHAR, $adjustment VARCHAR, $from DATE, $offset INTEGER (= limit - 1). Columns: quote_date.
SELECT quote_date FROM quote_bars
WHERE ticker = $ticker AND adjustment = $adjustment AND quote_date >= $from
ORDER BY quote_date
LIMIT 1 OFFSET $offset
