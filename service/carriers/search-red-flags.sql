-- Carriers with red flags. Params: $code (VARCHAR|null: any flag), $state (VARCHAR|null), $min_risk (DOUBLE|null: minimum
-- risk_score), $safety_rating (VARCHAR|null: census rating S, C or U), $limit, $offset.
-- Highest score first, then DOT number (unique: a deterministic order, so cursor pages never skip or repeat a row).
-- Columns: dot_number, legal_name, phy_state, safety_rating, risk_score, risk_level, recommendation, red_flag_codes, total.
SELECT dot_number, legal_name, phy_state, safety_rating, risk_score, risk_level, recommendation, red_flag_codes, count(*) OVER () AS total
FROM carrier_risk
WHERE len(red_flag_codes) > 0
  AND ($code IS NULL OR list_contains(red_flag_codes, $code))
  AND ($state IS NULL OR phy_state = $state)
  AND ($min_risk IS NULL OR risk_score >= $min_risk)
  AND ($safety_rating IS NULL OR safety_rating = $safety_rating)
ORDER BY risk_score DESC, dot_number
LIMIT $limit OFFSET $offset;
