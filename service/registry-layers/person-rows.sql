-- Every role of the people $keys names (person_key values joined by chr(31); the first 200 person keys, in key order,
-- one of whose names contains the query: getPerson finds them in memory from person-names.sql), with the same
-- columns and order as find-person.sql. Params: $keys VARCHAR.
-- Columns: person_key, person_name, name_key, person_cik, cik, ticker, company_name, role, role_type,
--          first_seen, last_seen, accession, source_kind, origin.
WITH named AS (
  SELECT *, trim(regexp_replace(regexp_replace(lower(person_name), '[^\p{L}\p{N}\- ]', '', 'g'), '\s+', ' ', 'g')) AS name_key
  FROM people WHERE person_key IN (SELECT unnest(string_split($keys, chr(31))))
)
SELECT p.person_key, p.person_name, p.name_key, p.person_cik, p.cik, p.ticker, p.company_name, p.role, p.role_type, p.first_seen, p.last_seen,
       p.accession, p.source_kind, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM named p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
ORDER BY p.person_key, p.last_seen DESC NULLS LAST, p.company_name, p.role, p.role_type, p.accession, p.origin_leaf_hash
LIMIT 500
