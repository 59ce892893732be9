-- Packed store registry_profile (issue 22): per CIK, the rows of service/registry-layers/profile-facts.sql,
-- company-metrics.sql and affiliations.sql (at most 50), same columns, order (ties broken) and origin struct, as
-- {facts, metrics, affiliations}. Affiliations read other companies' people rows: a delta publish re-packs every
-- company sharing a person with a changed one (registry-packed.ts).
-- Only the CIKs of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (cik), v (JSON text).
WITH f AS (
  SELECT p.cik, list(struct_pack(fact_type := p.fact_type, value := p.value, numeric_value := p.numeric_value, evidence := p.evidence,
           section := p.section, accession := p.accession, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
         ORDER BY p.accession DESC NULLS LAST, p.fact_type, p.value, p.numeric_value, p.evidence, p.origin_leaf_hash) AS rows
  FROM profile_facts p LEFT JOIN origin_leaves o ON o.leaf_hash = p.origin_leaf_hash
  WHERE p.cik IN (SELECT k FROM _pack_keys)
  GROUP BY p.cik
),
m AS (
  SELECT f.cik, list(struct_pack(metric := f.metric, value := f.value, unit := f.unit, concept := f.concept, taxonomy := f.taxonomy,
           period_end := f.period_end, form := f.form, filed := f.filed, accession := f.accession, is_amendment := f.is_amendment,
           is_fallback := f.is_fallback, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
         ORDER BY f.metric, f.accession, f.origin_leaf_hash) AS rows
  FROM company_facts f LEFT JOIN origin_leaves o ON o.leaf_hash = f.origin_leaf_hash
  WHERE f.cik IN (SELECT k FROM _pack_keys)
  GROUP BY f.cik
),
a AS (
  SELECT cik, list(struct_pack(person_name := person_name, company_name := company_name, ticker := ticker, cik := other_cik, role := role,
           role_type := role_type, last_seen := last_seen)
         ORDER BY person_name, company_name, ticker, other_cik, role, role_type, last_seen) AS rows
  FROM (
    SELECT * FROM (
      SELECT DISTINCT mine.cik, other.person_name, other.company_name, other.ticker, other.cik AS other_cik, other.role, other.role_type, other.last_seen
      FROM people mine JOIN people other ON other.person_key = mine.person_key AND other.cik <> mine.cik
      WHERE mine.cik IN (SELECT k FROM _pack_keys)
    )
    QUALIFY row_number() OVER (PARTITION BY cik ORDER BY person_name, company_name, ticker, other_cik, role, role_type, last_seen) <= 50
  )
  GROUP BY cik
)
SELECT k.k, to_json(struct_pack(facts := coalesce(f.rows, []), metrics := coalesce(m.rows, []), affiliations := coalesce(a.rows, [])))::VARCHAR AS v
FROM _pack_keys k LEFT JOIN f ON f.cik = k.k LEFT JOIN m ON m.cik = k.k LEFT JOIN a ON a.cik = k.k
WHERE f.rows IS NOT NULL OR m.rows IS NOT NULL OR a.rows IS NOT NULL
