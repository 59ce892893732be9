-- Key XBRL metrics of one company (shares outstanding, public float, revenue, net income).
-- Params: $cik INTEGER. Columns: metric, value, unit, concept, taxonomy, period_end, form, filed, accession, is_amendment, is_fallback, origin.
SELECT f.metric, f.value, f.unit, f.concept, f.taxonomy, f.period_end, f.form, f.filed, f.accession, f.is_amendment, f.is_fallback, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM company_facts f LEFT JOIN origin_leaves o ON o.leaf_hash = f.origin_leaf_hash
WHERE f.cik = $cik
ORDER BY f.metric
