-- Derives people and signal_hits at publish, after company_lookup (they carry the company's ticker).
-- Params: none. Reads people_roles, signals, company_lookup, companies, filings, documents.
DELETE FROM people;
INSERT INTO people
WITH r0 AS (
  SELECT *, trim(regexp_replace(lower(regexp_replace(person_name, '[^A-Za-z\- ]', '', 'g')), '\s+', ' ', 'g')) AS name_key
  FROM people_roles WHERE cik IS NOT NULL
),
owners AS (
  -- The reporting owners of each company's Forms 3/4/5 by normalised name, when the name is one owner's only.
  SELECT cik, name_key, min(person_cik) AS person_cik
  FROM r0 WHERE person_cik IS NOT NULL
  GROUP BY cik, name_key HAVING count(DISTINCT person_cik) = 1
),
r AS (
  -- A reporting owner's CIK identifies the person across filings (the ownership parser writes names "First Last").
  -- 10-K executive lists carry no CIK: a listed name that is one of the same company's reporting owners is that
  -- owner (same key and CIK: "Timothy D. Cook" in the 10-K is the Form 4 filer "COOK TIMOTHY D"); any other keeps
  -- the normalised name as its key.
  SELECT r0.*, coalesce(r0.person_cik, o.person_cik) AS linked_cik,
         CASE WHEN coalesce(r0.person_cik, o.person_cik) IS NOT NULL THEN 'cik' || coalesce(r0.person_cik, o.person_cik) ELSE r0.name_key END AS person_key
  FROM r0 LEFT JOIN owners o ON r0.person_cik IS NULL AND o.cik = r0.cik AND o.name_key = r0.name_key
),
prim AS (SELECT cik, ticker, name FROM company_lookup WHERE is_primary)
-- The latest row wins; ties on the date break by accession and origin leaf, so every run picks the same row.
SELECT r.person_key, arg_max(r.person_name, k), max(r.linked_cik), r.cik,
       coalesce(min(p.ticker), arg_max(r.issuer_ticker, k)),
       coalesce(min(c.name), arg_max(r.issuer_name, k), min(p.name)),
       r.role_type, r.role, min(r.as_of), max(r.as_of), arg_max(r.accession, k), arg_max(r.source_kind, k),
       arg_max(r.origin_leaf_hash, k)
FROM r LEFT JOIN prim p ON p.cik = r.cik LEFT JOIN companies c ON c.cik = r.cik,
     LATERAL (SELECT (coalesce(r.as_of, DATE '1900-01-01'), r.accession, r.origin_leaf_hash, r.person_name) AS k)
GROUP BY r.person_key, r.cik, r.role_type, r.role;

DELETE FROM signal_hits;
INSERT INTO signal_hits
SELECT p.ticker, p.exchange, s.cik, coalesce(c.name, p.name), s.accession,
       coalesce(f.filing_date, d.filing_date), s.signal_type, s.pattern_id, s.strength, s.section, s.evidence, s.origin_leaf_hash
FROM signals s
LEFT JOIN (SELECT cik, ticker, exchange, name FROM company_lookup WHERE is_primary) p ON p.cik = s.cik
LEFT JOIN companies c ON c.cik = s.cik
LEFT JOIN filings f ON f.cik = s.cik AND f.accession = s.accession
LEFT JOIN (SELECT content_sha256, min(filing_date) AS filing_date FROM documents GROUP BY ALL) d ON d.content_sha256 = s.content_sha256;
