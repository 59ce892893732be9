-- Directors, officers and executive officers of one company, latest seen first.
-- Params: $cik INTEGER. Columns: person_key, person_name, person_cik, role_type, role, first_seen, last_seen, accession, source_kind, origin.
SELECT p.person_key, p.person_name, p.person_cik, p.role_type, p.role, p.first_seen, p.last_seen, p.accession, p.source_kind, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM people p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
WHERE p.cik = $cik
ORDER BY p.last_seen DESC NULLS LAST, p.person_name, p.role_type
