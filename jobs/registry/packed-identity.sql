-- Packed store registry_identity (issue 22): per CIK, everything the identity card (service/company) and the quote
-- routes' market context (service/quotes) read from the registry, so that neither runs a DuckDB query:
--   lookup    the CIK's company_lookup rows (primary first), with the columns of service/company/find-company.sql
--             that come from company_lookup (name is the lookup's; the reader applies coalesce(c.name, l.name));
--   company   its companies row's columns read by find-company.sql (JSON columns as their text), or null;
--   employees find-company.sql's arg_max over profile_facts (same expression);
--   facts     the rows of service/quotes/market-facts.sql (company_facts, shares_outstanding and employees);
--   shares    every company_share_counts row with the columns of market-shares-asof.sql but dated_after, by
--             period_end (the reader picks the as-of row by the rule of shares-asof.sql / market-shares-asof.sql).
-- Every part reads rows of its own CIK only, which the delta publish's key set tracks.
-- Only the CIKs of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (cik), v (JSON text).
WITH l AS (
  SELECT cik, list(struct_pack(ticker := ticker, cik_padded := cik_padded, name := name, exchange := exchange, is_primary := is_primary,
           status := status, status_reason := status_reason) ORDER BY is_primary DESC, ticker) AS rows
  FROM company_lookup
  WHERE cik IN (SELECT k FROM _pack_keys)
  GROUP BY cik
),
e AS (
  SELECT cik, arg_max(numeric_value, accession) AS employees
  FROM profile_facts
  WHERE cik IN (SELECT k FROM _pack_keys) AND fact_type = 'employees'
  GROUP BY cik
),
f AS (
  SELECT cik, list(struct_pack(metric := metric, value := value, period_end := period_end, filed := filed, accession := accession,
           form := form, origin := origin::VARCHAR) ORDER BY metric, period_end, accession, origin_leaf_hash) AS rows
  FROM company_facts
  WHERE cik IN (SELECT k FROM _pack_keys) AND metric IN ('shares_outstanding', 'employees')
  GROUP BY cik
),
s AS (
  SELECT cik, list(struct_pack(value := value, period_end := period_end, filed := filed, accession := accession, form := form,
           concept := taxonomy || ':' || concept, origin := origin::VARCHAR) ORDER BY period_end, accession, origin_leaf_hash) AS rows
  FROM company_share_counts
  WHERE cik IN (SELECT k FROM _pack_keys)
  GROUP BY cik
)
SELECT l.cik AS k,
       to_json(struct_pack(
         lookup := l.rows,
         company := CASE WHEN c.cik IS NULL THEN NULL ELSE struct_pack(name := c.name, sic := c.sic, sic_description := c.sic_description,
           state_of_incorporation := c.state_of_incorporation, state_of_incorporation_description := c.state_of_incorporation_description,
           fiscal_year_end := c.fiscal_year_end, category := c.category, entity_type := c.entity_type,
           business_address := c.business_address::VARCHAR, former_names := c.former_names::VARCHAR, tickers := c.tickers,
           exchanges := c.exchanges, origin := c.origin::VARCHAR) END,
         employees := e.employees,
         facts := coalesce(f.rows, []),
         shares := coalesce(s.rows, [])))::VARCHAR AS v
FROM l
LEFT JOIN (SELECT * FROM companies WHERE cik IN (SELECT k FROM _pack_keys) QUALIFY row_number() OVER (PARTITION BY cik ORDER BY name) = 1) c ON c.cik = l.cik
LEFT JOIN e ON e.cik = l.cik
LEFT JOIN f ON f.cik = l.cik
LEFT JOIN s ON s.cik = l.cik
