-- Links documents, and the rows read from them, to their filing at publish (before derive-layers.sql).
-- Params: none. Reads filings. Updates documents, doc_events, people_roles, profile_facts, signals in place.
-- A delta publish (lib/warehouse/publish.ts) runs it over the whole tables too, then re-derives the companies whose
-- rows it linked (registry-layers.derive.ts, deriveRegistryDelta).

-- Documents whose path did not name their filing: match the filing index by primary document name,
-- then by CIK + form + the date in the file name.
UPDATE documents SET cik = f.cik, accession = f.accession, filing_date = f.filing_date
FROM filings f
WHERE documents.accession IS NULL AND f.primary_document = documents.document;
UPDATE documents SET accession = f.accession, filing_date = f.filing_date
FROM filings f
WHERE documents.accession IS NULL AND documents.cik = f.cik AND documents.date_hint = f.filing_date
  AND f.form = documents.form;
UPDATE documents SET filing_date = f.filing_date
FROM filings f
WHERE documents.filing_date IS NULL AND documents.cik = f.cik AND documents.accession = f.accession;
UPDATE doc_events SET cik = d.cik, accession = d.accession FROM documents d
WHERE doc_events.content_sha256 = d.content_sha256 AND (doc_events.cik IS NULL OR doc_events.accession IS NULL);
UPDATE doc_events SET filing_date = d.filing_date FROM documents d
WHERE doc_events.content_sha256 = d.content_sha256 AND doc_events.filing_date IS NULL;
UPDATE people_roles SET cik = d.cik, accession = d.accession FROM documents d
WHERE people_roles.content_sha256 = d.content_sha256 AND (people_roles.cik IS NULL OR people_roles.accession IS NULL);
UPDATE people_roles SET as_of = d.filing_date FROM documents d
WHERE people_roles.content_sha256 = d.content_sha256 AND people_roles.as_of IS NULL;
UPDATE profile_facts SET cik = d.cik, accession = d.accession FROM documents d
WHERE profile_facts.content_sha256 = d.content_sha256 AND (profile_facts.cik IS NULL OR profile_facts.accession IS NULL);
UPDATE signals SET cik = d.cik, accession = d.accession FROM documents d
WHERE signals.content_sha256 = d.content_sha256 AND (signals.cik IS NULL OR signals.accession IS NULL);
