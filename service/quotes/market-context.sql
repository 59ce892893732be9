-- market-facts.sql and market-shares-asof.sql in one query (one round trip to the registry reader per answer):
-- rows of kind 'fact' are market-facts.sql's (company_facts, one picked fact per metric), the row of kind 'as_of'
-- is market-shares-asof.sql's (company_share_counts: the latest count on or before the quote date, else the earliest,
-- flagged by dated_after). A registry snapshot without company_share_counts fails here: the caller then runs the two.
-- Params: $cik INTEGER, $quote_date DATE. Columns: kind, metric, value, period_end, filed, accession, form, concept,
-- origin, dated_after.
SELECT 'fact' AS kind, metric, value, period_end, filed, accession, form, NULL::VARCHAR AS concept, origin,
       NULL::BOOLEAN AS dated_after
FROM company_facts
WHERE cik = $cik AND metric IN ('shares_outstanding', 'employees')
UNION ALL
(SELECT 'as_of' AS kind, NULL::VARCHAR AS metric, value, period_end, filed, accession, form,
        taxonomy || ':' || concept AS concept, origin, period_end > $quote_date AS dated_after
 FROM company_share_counts
 WHERE cik = $cik
 ORDER BY period_end > $quote_date, CASE WHEN period_end <= $quote_date THEN period_end END DESC NULLS LAST, period_end
 LIMIT 1)
