-- Packed store registry_people (issue 22): per CIK, the rows of service/registry-layers/company-people.sql, same
-- columns, order (ties broken by role, accession and leaf) and origin struct, as {people}. person_cik is text, as
-- the service reads a BIGINT. Only the CIKs of temp table _pack_keys(k) (a batch: registry-packed.ts).
-- Columns: k (cik), v (JSON text).
SELECT p.cik AS k, to_json(struct_pack(people := list(struct_pack(person_key := p.person_key, person_name := p.person_name,
         person_cik := p.person_cik::VARCHAR, role_type := p.role_type, role := p.role, first_seen := p.first_seen, last_seen := p.last_seen,
         accession := p.accession, source_kind := p.source_kind, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
       ORDER BY p.last_seen DESC NULLS LAST, p.person_name, p.role_type, p.role, p.accession, p.origin_leaf_hash)))::VARCHAR AS v
FROM people p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
WHERE p.cik IN (SELECT k FROM _pack_keys)
GROUP BY p.cik
