-- Filing index of one company with EDGAR URLs and extraction status, newest first.
-- Params: $cik INTEGER, $form VARCHAR (NULL: all; '10-K' also matches 10-K/A, 10-K405, 10-KT), $limit INTEGER, $offset INTEGER (cursor pages: the order ends with the unique accession).
-- Columns: accession, form, filing_date, report_date, acceptance_datetime, items, primary_document, document_url, index_url,
--          extraction_status, extraction_reason, listed_in, origin.
SELECT f.accession, f.form, f.filing_date, f.report_date, f.acceptance_datetime, f.items, f.primary_document, f.document_url, f.index_url,
       f.extraction_status, f.extraction_reason, f.listed_in, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM filing_index f LEFT JOIN origin_leaves o ON o.leaf_hash = f.origin_leaf_hash
WHERE f.cik = $cik AND ($form IS NULL OR f.form = $form OR starts_with(f.form, $form || '/') OR ($form = '10-K' AND f.form IN ('10-K405', '10-KT')))
ORDER BY f.filing_date DESC, f.accession DESC
LIMIT $limit OFFSET $offset
