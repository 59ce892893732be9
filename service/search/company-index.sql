-- Every primary ticker with the text company search matches against, loaded once per snapshot into memory.
-- Params: none. Columns: ticker, cik, name, exchange, status, sic_description, rank (position in the current SEC
-- ticker file, which lists by market value; NULL when absent), lname (lower-cased name), hay (lower-cased name,
-- ticker, the identity card's summary facts and tags: SIC code and description, exchange, category, headquarters
-- city and state, state of incorporation, status).
SELECT l.ticker, l.cik, coalesce(c.name, l.name) AS name, l.exchange, l.status, c.sic_description, r.rank,
       lower(coalesce(c.name, l.name, '')) AS lname,
       lower(concat_ws(' ', l.ticker, coalesce(c.name, l.name), c.sic_description, 'sic ' || c.sic, l.exchange, c.category,
                       json_extract_string(c.business_address, '$.city'), json_extract_string(c.business_address, '$.state_or_country'),
                       c.state_of_incorporation, c.state_of_incorporation_description, l.status)) AS hay
FROM company_lookup l
LEFT JOIN companies c ON c.cik = l.cik
LEFT JOIN (SELECT cik, min(rank) AS rank FROM ticker_snapshots WHERE is_current AND rank IS NOT NULL GROUP BY cik) r ON r.cik = l.cik
WHERE l.is_primary
