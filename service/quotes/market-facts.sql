-- Registry facts for market context (registry domain's company_facts, one picked fact per metric).
-- Params: $cik INTEGER. Columns: metric, value, period_end, filed, accession, form, origin.
SELECT metric, value, period_end, filed, accession, form, origin
FROM company_facts
WHERE cik = $cik AND metric IN ('shares_outstanding', 'employees')
