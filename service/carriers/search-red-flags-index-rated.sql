-- Carriers with red flags from the pre-sorted index (jobs/fmcsa/derive-red-flag-index.sql) with a safety_rating
-- filter: same rows, order and columns as search-red-flags.sql. Params: $code_key (a rule code, or '*': any),
-- $state_key (a state, or '*': any), $min_risk (DOUBLE|null), $safety_rating (VARCHAR), $limit, $offset.
-- The rating is not in the index: the (code, state_key) range is read by row-group min/max, joined to its rows
-- and filtered (a scan of one range, not of carrier_risk).
-- Columns: dot_number, legal_name, phy_state, safety_rating, risk_score, risk_level, recommendation, red_flag_codes.
SELECT r.dot_number, r.legal_name, r.phy_state, r.safety_rating, r.risk_score, r.risk_level, r.recommendation, r.red_flag_codes
FROM red_flag_rows r
WHERE r.g IN (
  SELECT i.g FROM red_flag_index i
  WHERE i.code = $code_key AND i.state_key = $state_key AND ($min_risk IS NULL OR i.risk_score >= $min_risk)
)
  AND r.safety_rating = $safety_rating
ORDER BY r.g
LIMIT $limit OFFSET $offset;
