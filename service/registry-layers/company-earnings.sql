-- Earnings calendar of one company: confirmed (8-K 2.02) and predicted dates, newest first.
-- Params: $cik INTEGER. Columns: event_date, confirmed, timing, timing_established, acceptance_et, timing_basis, acceptance_check, accession, confidence, basis, document_url, origin.
SELECT e.event_date, e.confirmed, e.timing, e.timing_established, e.acceptance_et, e.timing_basis, e.acceptance_check, e.accession, e.confidence, e.basis, e.document_url, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM earnings_calendar e LEFT JOIN origin_leaves o ON o.leaf_hash = e.origin_leaf_hash
WHERE e.cik = $cik
ORDER BY e.event_date DESC
