-- Roles of every person whose name contains $q (case-insensitive), across companies.
-- Params: $q VARCHAR (lower-cased). Columns: person_key, person_name, person_cik, cik, ticker, company_name, role, role_type,
--          first_seen, last_seen, accession, source_kind, origin.
SELECT p.person_key, p.person_name, p.person_cik, p.cik, p.ticker, p.company_name, p.role, p.role_type, p.first_seen, p.last_seen,
       p.accession, p.source_kind, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM people p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
WHERE contains(lower(p.person_name), $q)
ORDER BY p.person_key, p.last_seen DESC NULLS LAST, p.company_name
LIMIT 500
