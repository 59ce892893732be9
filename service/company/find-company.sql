-- Resolves a ticker or CIK to one company row with its identity fields.
-- Params: $ticker VARCHAR (upper-cased; NULL when looking up by CIK), $cik INTEGER (NULL when by ticker).
-- Columns: ticker, cik, cik_padded, name, exchange, status, status_reason, sic, sic_description,
--          state_of_incorporation, state_of_incorporation_description, fiscal_year_end, category, entity_type,
--          business_address (JSON), former_names (JSON), tickers, exchanges, origin (JSON), has_submissions,
--          employees (latest 10-K Item 1 figure from profile_facts, or NULL).
SELECT
  l.ticker, l.cik, l.cik_padded, coalesce(c.name, l.name) AS name, l.exchange, l.status, l.status_reason,
  c.sic, c.sic_description, c.state_of_incorporation, c.state_of_incorporation_description,
  c.fiscal_year_end, c.category, c.entity_type, c.business_address, c.former_names, c.tickers, c.exchanges,
  c.origin, c.cik IS NOT NULL AS has_submissions,
  (SELECT arg_max(p.numeric_value, p.accession) FROM profile_facts p WHERE p.cik = l.cik AND p.fact_type = 'employees') AS employees
FROM company_lookup l
LEFT JOIN companies c ON c.cik = l.cik
WHERE ($ticker IS NOT NULL AND l.ticker = $ticker)
   OR ($cik IS NOT NULL AND l.cik = $cik AND l.is_primary)
ORDER BY l.is_primary DESC
LIMIT 1
