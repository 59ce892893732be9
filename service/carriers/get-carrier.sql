-- Carrier identity by DOT. Params: $dot INTEGER. One row or none.
SELECT c.* EXCLUDE (source_file, content_sha256), r.risk_score, r.risk_level, r.recommendation, r.authority_status, r.as_of
FROM carriers c LEFT JOIN carrier_risk r USING (dot_number)
WHERE c.dot_number = $dot;
