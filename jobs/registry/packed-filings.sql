-- Packed store registry_filings (issue 22): per CIK, every row of service/registry-layers/company-filings.sql (no form
-- filter, no paging: the route filters and pages the list), same columns, order and origin struct, as {filings}.
-- Only the CIKs of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (cik), v (JSON text).
SELECT f.cik AS k, to_json(struct_pack(filings := list(struct_pack(accession := f.accession, form := f.form, filing_date := f.filing_date,
         report_date := f.report_date, acceptance_datetime := f.acceptance_datetime, items := f.items, primary_document := f.primary_document,
         document_url := f.document_url, index_url := f.index_url, extraction_status := f.extraction_status, extraction_reason := f.extraction_reason,
         listed_in := f.listed_in, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
       ORDER BY f.filing_date DESC, f.accession DESC)))::VARCHAR AS v
FROM filing_index f LEFT JOIN origin_leaves o ON o.leaf_hash = f.origin_leaf_hash
WHERE f.cik IN (SELECT k FROM _pack_keys)
GROUP BY f.cik
