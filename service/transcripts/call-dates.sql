-- Earnings-call date history of one ticker. Params: $ticker VARCHAR.
SELECT fiscal_year, fiscal_quarter, call_date, call_time FROM transcript_call_dates WHERE ticker = $ticker
ORDER BY call_date DESC
