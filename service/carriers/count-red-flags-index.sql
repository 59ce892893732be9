-- Matches of a red-flag filter without safety_rating, from the pre-sorted index (the `total` of
-- search-red-flags-index.sql): a count of one (code, state_key) range. Params: $code_key, $state_key,
-- $min_risk (DOUBLE|null). Columns: total.
SELECT count(*)::BIGINT AS total
FROM red_flag_index i
WHERE i.code = $code_key AND i.state_key = $state_key AND ($min_risk IS NULL OR i.risk_score >= $min_risk);
