-- Lookup keys of the registry serving database.
CREATE INDEX IF NOT EXISTS company_lookup_ticker_idx ON company_lookup (ticker);
CREATE INDEX IF NOT EXISTS company_lookup_cik_idx ON company_lookup (cik);
CREATE INDEX IF NOT EXISTS companies_cik_idx ON companies (cik);
CREATE INDEX IF NOT EXISTS filings_cik_idx ON filings (cik);
