-- Carriers with red flags. Params: $code (VARCHAR|null: any flag), $state (VARCHAR|null), $limit, $offset.
-- Highest score first, then DOT number (unique: a deterministic order, so cursor pages never skip or repeat a row). Columns: dot_number, legal_name, phy_state, risk_score, risk_level, recommendation, red_flag_codes, total.
SELECT dot_number, legal_name, phy_state, risk_score, risk_level, recommendation, red_flag_codes, count(*) OVER () AS total
FROM carrier_risk
WHERE len(red_flag_codes) > 0
  AND ($code IS NULL OR list_contains(red_flag_codes, $code))
  AND ($state IS NULL OR phy_state = $state)
ORDER BY risk_score DESC, dot_number
LIMIT $limit OFFSET $offset;
