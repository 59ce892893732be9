-- Shares outstanding as of a date (registry domain's company_share_counts: one EDGAR fact per period end), for the
-- identity card's market cap: the latest fact whose period end is on or before $as_of, else the earliest one.
-- Same rule as service/quotes/market-shares-asof.sql (the /quote market context), so both give the same figure.
-- Params: $cik INTEGER, $as_of DATE. Columns: value (DOUBLE), period_end (YYYY-MM-DD).
SELECT value::DOUBLE AS value, period_end::VARCHAR AS period_end
FROM company_share_counts
WHERE cik = $cik
ORDER BY period_end > $as_of, CASE WHEN period_end <= $as_of THEN period_end END DESC NULLS LAST, period_end
LIMIT 1
