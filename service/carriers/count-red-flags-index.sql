-- Matches of a red-flag filter from the pre-sorted index (the `total` of search-red-flags-index*.sql).
-- Params: $code_key, $state_key, $min_risk (DOUBLE|null), $safety_rating (VARCHAR|null). Columns: total.
SELECT count(*)::BIGINT AS total
FROM red_flag_index i
WHERE i.code = $code_key AND i.state_key = $state_key
  AND ($min_risk IS NULL OR i.risk_score >= $min_risk)
  AND ($safety_rating IS NULL OR i.g IN (SELECT g FROM red_flag_rows WHERE safety_rating = $safety_rating));
