-- Profile facts of one company (10-K Item 1: employees, products, partnerships), latest filing first.
-- Params: $cik INTEGER. Columns: fact_type, value, numeric_value, evidence, section, accession, origin (JSON text).
SELECT p.fact_type, p.value, p.numeric_value, p.evidence, p.section, p.accession, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM profile_facts p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
WHERE p.cik = $cik
ORDER BY p.accession DESC NULLS LAST, p.fact_type, p.value
