-- Product launches from 10-K product lists, appended to the timeline after derive-layers.sql (issue 19: the
-- timeline's product launches, beside the 8-K press releases eight-k.ts reads as `product_launch`).
-- A product line that a company's 10-K names among its principal products and that the company's previous 10-K with
-- a product list (in this warehouse) did not name is a launch, dated by the later 10-K's report period end (else its
-- filing date). A company's first 10-K here launches nothing: its products may be decades old.
-- Reads profile_facts (fact_type 'product'), filings, documents. Writes one timeline row per (cik, accession, product):
-- item '10-K products', event_type 'product_launch', basis 'document', the product fact's origin leaf.
INSERT INTO timeline
WITH products AS (
  SELECT cik, accession, lower(trim(value)) AS product_key, arg_min(value, k) AS name, arg_min(evidence, k) AS evidence,
         arg_min(origin_leaf_hash, k) AS origin_leaf_hash
  FROM profile_facts, LATERAL (SELECT (origin_leaf_hash, value, evidence) AS k)
  WHERE fact_type = 'product' AND cik IS NOT NULL AND accession IS NOT NULL
  GROUP BY cik, accession, lower(trim(value))
),
tenk AS (
  SELECT p.cik, p.accession,
         coalesce(min(f.filing_date), min(d.filing_date)) AS filing_date,
         min(f.report_date) AS report_date,
         min(f.primary_document) AS primary_document,
         coalesce(min(f.form), min(d.form), '10-K') AS form
  FROM (SELECT DISTINCT cik, accession FROM products) p
  LEFT JOIN filings f ON f.cik = p.cik AND f.accession = p.accession
  LEFT JOIN documents d ON d.cik = p.cik AND d.accession = p.accession
  GROUP BY p.cik, p.accession
),
ordered AS (
  SELECT *, lag(accession) OVER (PARTITION BY cik ORDER BY filing_date, accession) AS prev_accession
  FROM tenk
  WHERE filing_date IS NOT NULL
)
SELECT o.cik, o.accession, o.form, '10-K products', 'product_launch', 'New product line: ' || p.name,
       'New among the principal product lines in this ' || o.form || ' (not in the previous one): ' || coalesce(p.evidence, p.name),
       coalesce(o.report_date, o.filing_date), o.filing_date,
       CASE WHEN o.primary_document IS NOT NULL
            THEN 'https://www.sec.gov/Archives/edgar/data/' || o.cik || '/' || replace(o.accession, '-', '') || '/' || o.primary_document END,
       'document', p.origin_leaf_hash
FROM ordered o
JOIN products p ON p.cik = o.cik AND p.accession = o.accession
WHERE o.prev_accession IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM products q WHERE q.cik = o.cik AND q.accession = o.prev_accession AND q.product_key = p.product_key);
