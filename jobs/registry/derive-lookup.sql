-- Builds company_lookup: every ticker ever seen, resolved to the CIK that holds it now.
-- Params: none. Reads ticker_snapshots, companies, filings. Replaces company_lookup.
-- Status rules (README "Registry ingest (SEC EDGAR)" → status), first match wins:
--   active    the CIK is in a current ticker file (a Form 25 for one class of securities does not end a listing);
--   acquired  not current, and its filings in the 365 days before its last filing include an 8-K item 2.01
--             (completion of acquisition or disposition), from the filing index or the 8-K document itself;
--             ("last filings" = the 365 days before its last filing: a bankrupt or acquired company keeps filing for months);
--   delisted  not current, and an 8-K item 1.03 (bankruptcy) or a Form 25/25-NSE (delisting) among those last filings,
--             or listed in an earlier ticker snapshot and absent from the current one;
--   inactive  not current and never in a ticker file (individuals, funds, shells), or deregistered by a Form 15
--             without any listing history.
DELETE FROM company_lookup;
INSERT INTO company_lookup
WITH current_t AS (
  SELECT ticker, cik, cik_padded, name, exchange, rank
  FROM ticker_snapshots WHERE is_current
  QUALIFY row_number() OVER (PARTITION BY ticker ORDER BY (exchange IS NULL), rank) = 1
),
current_ciks AS (SELECT DISTINCT cik FROM current_t),
historic_t AS (
  SELECT ticker, cik, cik_padded, name, exchange, rank
  FROM ticker_snapshots
  WHERE NOT is_current AND ticker NOT IN (SELECT ticker FROM current_t)
  QUALIFY row_number() OVER (PARTITION BY ticker ORDER BY snapshot_date DESC NULLS LAST, rank) = 1
),
exit_events AS (
  SELECT cik, filing_date, form, items FROM filings
  UNION ALL
  SELECT cik, coalesce(filing_date, event_date), form, [item] FROM timeline WHERE basis = 'document'
),
exit_forms AS (
  SELECT cik,
         bool_or(form LIKE '8-K%' AND list_contains(items, '2.01')) AS had_acquisition,
         bool_or(form LIKE '8-K%' AND list_contains(items, '1.03')) AS had_bankruptcy,
         bool_or(form IN ('25', '25-NSE')) AS had_delisting,
         bool_or(form IN ('15', '15-12B', '15-12G', '15-15D')) AS had_deregistration
  FROM exit_events e
  WHERE filing_date >= (SELECT max(filing_date) FROM exit_events e2 WHERE e2.cik = e.cik) - INTERVAL 365 DAY
  GROUP BY cik
),
all_t AS (
  SELECT *, true AS is_current FROM current_t
  UNION ALL
  SELECT *, false AS is_current FROM historic_t
),
with_companies AS (
  SELECT NULL AS ticker, c.cik, c.cik_padded, c.name, c.exchanges[1] AS exchange, 0 AS rank, false AS is_current
  FROM companies c
  WHERE c.cik NOT IN (SELECT cik FROM all_t)
)
SELECT
  coalesce(t.ticker, 'CIK' || t.cik_padded) AS ticker,
  t.cik, t.cik_padded, coalesce(co.name, t.name) AS name, t.exchange,
  row_number() OVER (PARTITION BY t.cik ORDER BY t.is_current DESC, t.rank) = 1 AS is_primary,
  CASE
    WHEN t.cik IN (SELECT cik FROM current_ciks) THEN 'active'
    WHEN coalesce(e.had_acquisition, false) THEN 'acquired'
    WHEN coalesce(e.had_bankruptcy, false) OR coalesce(e.had_delisting, false) OR t.ticker IS NOT NULL THEN 'delisted'
    ELSE 'inactive'
  END AS status,
  CASE
    WHEN t.cik IN (SELECT cik FROM current_ciks) THEN 'listed in the current SEC ticker file'
    WHEN coalesce(e.had_acquisition, false) THEN 'no longer in the SEC ticker file; 8-K item 2.01 among its last filings'
    WHEN coalesce(e.had_bankruptcy, false) THEN 'no longer in the SEC ticker file; 8-K item 1.03 (bankruptcy) among its last filings'
    WHEN coalesce(e.had_delisting, false) THEN 'no longer in the SEC ticker file; Form 25 (delisting) among its last filings'
    WHEN t.ticker IS NOT NULL THEN 'listed in an earlier SEC ticker file, absent from the current one'
    WHEN coalesce(e.had_deregistration, false) THEN 'deregistered (Form 15) and never in an SEC ticker file'
    ELSE 'never listed in an SEC ticker file'
  END AS status_reason
FROM (SELECT * FROM all_t UNION ALL SELECT * FROM with_companies) t
LEFT JOIN companies co ON co.cik = t.cik
LEFT JOIN exit_forms e ON e.cik = t.cik;
