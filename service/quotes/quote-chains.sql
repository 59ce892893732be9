-- The chains of a ticker: one row per adjustment with its newest date.
-- Params: $ticker VARCHAR. Columns: adjustment, last_date, first_date, days.
SELECT adjustment, max(quote_date) AS last_date, min(quote_date) AS first_date, count(*)::INTEGER AS days
FROM quote_bars WHERE ticker = $ticker
GROUP BY adjustment
ORDER BY last_date DESC, (adjustment = 'raw') DESC
