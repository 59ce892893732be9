-- Packed store registry_person (issue 22): per person id (hash of person_key; several keys may share one id, the
-- reader picks its key's rows), every role of those people across companies with the columns, order and origin
-- struct of service/registry-layers/find-person.sql (name_key computed the same way), as {rows}.
-- Only the ids of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (person id), v (JSON text).
SELECT (hash(p.person_key) % 2147483647)::INTEGER AS k,
       to_json(struct_pack(rows := list(struct_pack(person_key := p.person_key, person_name := p.person_name,
         name_key := trim(regexp_replace(regexp_replace(lower(p.person_name), '[^\p{L}\p{N}\- ]', '', 'g'), '\s+', ' ', 'g')),
         person_cik := p.person_cik::VARCHAR, cik := p.cik, ticker := p.ticker, company_name := p.company_name, role := p.role,
         role_type := p.role_type, first_seen := p.first_seen, last_seen := p.last_seen, accession := p.accession,
         source_kind := p.source_kind, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
       ORDER BY p.person_key, p.last_seen DESC NULLS LAST, p.company_name, p.role, p.role_type, p.accession, p.origin_leaf_hash)))::VARCHAR AS v
FROM people p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
WHERE p.person_key IS NOT NULL AND (hash(p.person_key) % 2147483647)::INTEGER IN (SELECT k FROM _pack_keys)
GROUP BY 1
