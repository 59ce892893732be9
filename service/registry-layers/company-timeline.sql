-- Timeline events of one company (8-K items except exhibits, and product launches from 10-K product lists), newest first.
-- Params: $cik INTEGER, $limit INTEGER, $offset INTEGER (cursor pages: the order ends with the row's unique key,
-- accession + item + title, and its origin leaf). Columns: event_date, filing_date, event_type, item, title, summary, accession, form, document_url, basis, origin.
SELECT t.event_date, t.filing_date, t.event_type, t.item, t.title, t.summary, t.accession, t.form, t.document_url, t.basis, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM timeline t LEFT JOIN origin_leaves o ON o.leaf_hash = t.origin_leaf_hash
WHERE t.cik = $cik
ORDER BY coalesce(t.event_date, t.filing_date) DESC NULLS LAST, t.accession DESC, t.item, t.title, t.origin_leaf_hash
LIMIT $limit OFFSET $offset
