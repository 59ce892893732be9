-- Signal hits filtered by ticker, type, exchange, minimum strength and, with $also, only companies that also have that signal.
-- Params: $ticker VARCHAR, $type VARCHAR, $exchange VARCHAR, $also VARCHAR, $min_strength INTEGER, $limit INTEGER, $offset INTEGER (all nullable but limit and offset).
-- Columns: ticker, exchange, cik, company_name, signal_type, strength, section, evidence, accession, filing_date, pattern_id, origin.
SELECT h.ticker, h.exchange, h.cik, h.company_name, h.signal_type, h.strength, h.section, h.evidence, h.accession, h.filing_date, h.pattern_id, to_json(struct_pack(leaf_hash := o.leaf_hash, alg := 'sha256', canon := 'rfc8785', kind := o.kind, source := o.source, source_url := o.source_url, retrieved_at := o.retrieved_at, content_sha256 := o.content_sha256, record_sha256 := o.record_sha256, parent := o.parent))::VARCHAR AS origin
FROM signal_hits h LEFT JOIN origin_leaves o ON o.leaf_hash = h.origin_leaf_hash
WHERE ($ticker IS NULL OR h.ticker = $ticker)
  AND ($type IS NULL OR h.signal_type = $type)
  AND ($exchange IS NULL OR lower(h.exchange) = lower($exchange))
  AND h.strength >= coalesce($min_strength, 1)
  AND ($also IS NULL OR h.cik IN (SELECT cik FROM signal_hits WHERE signal_type = $also AND strength >= coalesce($min_strength, 1)))
ORDER BY h.strength DESC, h.filing_date DESC NULLS LAST, h.ticker, h.section, h.signal_type, h.accession, h.pattern_id, h.evidence
LIMIT $limit OFFSET $offset
