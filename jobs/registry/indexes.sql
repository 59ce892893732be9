-- Lookup keys of the registry serving database.
CREATE INDEX IF NOT EXISTS company_lookup_ticker_idx ON company_lookup (ticker);
CREATE INDEX IF NOT EXISTS company_lookup_cik_idx ON company_lookup (cik);
CREATE INDEX IF NOT EXISTS companies_cik_idx ON companies (cik);
CREATE INDEX IF NOT EXISTS filings_cik_idx ON filings (cik);
CREATE INDEX IF NOT EXISTS timeline_cik_idx ON timeline (cik);
CREATE INDEX IF NOT EXISTS earnings_cik_idx ON earnings_calendar (cik);
CREATE INDEX IF NOT EXISTS filing_index_cik_idx ON filing_index (cik);
CREATE INDEX IF NOT EXISTS people_cik_idx ON people (cik);
CREATE INDEX IF NOT EXISTS people_key_idx ON people (person_key);
CREATE INDEX IF NOT EXISTS signal_hits_ticker_idx ON signal_hits (ticker);
CREATE INDEX IF NOT EXISTS company_facts_cik_idx ON company_facts (cik);
CREATE INDEX IF NOT EXISTS company_share_counts_cik_idx ON company_share_counts (cik);
CREATE INDEX IF NOT EXISTS profile_facts_cik_idx ON profile_facts (cik);
