-- Matches of a red-flag filter with safety_rating, from the pre-sorted index (the `total` of
-- search-red-flags-index-rated.sql). Params: $code_key, $state_key, $min_risk (DOUBLE|null), $safety_rating.
-- Columns: total.
SELECT count(*)::BIGINT AS total
FROM red_flag_rows r
WHERE r.g IN (
  SELECT i.g FROM red_flag_index i
  WHERE i.code = $code_key AND i.state_key = $state_key AND ($min_risk IS NULL OR i.risk_score >= $min_risk)
)
  AND r.safety_rating = $safety_rating;
