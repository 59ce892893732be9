-- The most recent 8-K filings of one company. Params: $cik INTEGER, $limit INTEGER.
-- Columns: accession, form, filing_date, items, document_url, index_url, origin.
SELECT f.accession, f.form, f.filing_date, f.items, f.document_url, f.index_url, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM filing_index f LEFT JOIN origin_leaves o ON o.leaf_hash = f.origin_leaf_hash
WHERE f.cik = $cik AND f.form LIKE '8-K%'
ORDER BY f.filing_date DESC, f.accession DESC
LIMIT $limit
