-- Packed store registry_timeline (issue 22): per CIK, every row of service/registry-layers/company-timeline.sql (no
-- paging: the route pages the list) and the counts of company-timeline-counts.sql, as {events, counts}.
-- Only the CIKs of temp table _pack_keys(k) (a batch: registry-packed.ts). Columns: k (cik), v (JSON text).
WITH c AS (
  SELECT cik, list(struct_pack(event_type := event_type, n := n) ORDER BY n DESC, event_type) AS counts
  FROM (SELECT cik, event_type, count(*)::INTEGER AS n FROM timeline WHERE cik IN (SELECT k FROM _pack_keys) GROUP BY cik, event_type)
  GROUP BY cik
)
SELECT t.cik AS k, to_json(struct_pack(events := list(struct_pack(event_date := t.event_date, filing_date := t.filing_date, event_type := t.event_type,
         item := t.item, title := t.title, summary := t.summary, accession := t.accession, form := t.form, document_url := t.document_url,
         basis := t.basis, origin := struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))
       ORDER BY coalesce(t.event_date, t.filing_date) DESC NULLS LAST, t.accession DESC, t.item, t.title, t.origin_leaf_hash),
       counts := any_value(c.counts)))::VARCHAR AS v
FROM timeline t LEFT JOIN origin_leaves o ON o.leaf_hash = t.origin_leaf_hash JOIN c ON c.cik = t.cik
WHERE t.cik IN (SELECT k FROM _pack_keys)
GROUP BY t.cik
