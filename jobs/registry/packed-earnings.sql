-- Packed store registry_earnings (issue 22): per CIK, the rows of service/registry-layers/company-earnings.sql and
-- recent-8ks.sql (limit 10), same columns, order and origin struct, as one JSON object {earnings, recent_8ks}.
-- Only the CIKs of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (cik), v (JSON text). Served by getCompanyEarnings without DuckDB; the equality test compares both.
WITH e AS (
  SELECT e.cik, list(struct_pack(event_date := e.event_date, confirmed := e.confirmed, timing := e.timing, timing_established := e.timing_established,
           acceptance_et := e.acceptance_et, timing_basis := e.timing_basis, acceptance_check := e.acceptance_check, accession := e.accession,
           confidence := e.confidence, basis := e.basis, document_url := e.document_url, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
         ORDER BY e.event_date DESC, e.confirmed, e.accession, e.origin_leaf_hash) AS rows
  FROM earnings_calendar e LEFT JOIN origin_leaves o ON o.leaf_hash = e.origin_leaf_hash
  WHERE e.cik IN (SELECT k FROM _pack_keys)
  GROUP BY e.cik
),
r AS (
  SELECT f.cik, list(struct_pack(accession := f.accession, form := f.form, filing_date := f.filing_date, items := f.items,
           document_url := f.document_url, index_url := f.index_url, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
         ORDER BY f.filing_date DESC, f.accession DESC) AS rows
  FROM (SELECT * FROM filing_index WHERE cik IN (SELECT k FROM _pack_keys) AND form LIKE '8-K%' QUALIFY row_number() OVER (PARTITION BY cik ORDER BY filing_date DESC, accession DESC) <= 10) f
  LEFT JOIN origin_leaves o ON o.leaf_hash = f.origin_leaf_hash
  GROUP BY f.cik
)
SELECT coalesce(e.cik, r.cik) AS k, to_json(struct_pack(earnings := coalesce(e.rows, []), recent_8ks := coalesce(r.rows, [])))::VARCHAR AS v
FROM e FULL JOIN r ON r.cik = e.cik
