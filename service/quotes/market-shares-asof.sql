-- Shares outstanding as of a quote date (registry domain's company_share_counts: one EDGAR fact per period end).
-- Picks the latest fact whose period end is on or before the quote date; when every fact is later (a quote older
-- than the company's first filing in companyfacts), the earliest one, flagged by dated_after.
-- Params: $cik INTEGER, $quote_date DATE. Columns: value, period_end, filed, accession, form, concept, origin, dated_after.
SELECT value, period_end, filed, accession, form, taxonomy || ':' || concept AS concept, origin, period_end > $quote_date AS dated_after
FROM company_share_counts
WHERE cik = $cik
ORDER BY period_end > $quote_date, CASE WHEN period_end <= $quote_date THEN period_end END DESC NULLS LAST, period_end
LIMIT 1
