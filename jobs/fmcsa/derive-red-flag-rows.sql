-- Flagged carriers in red-flag answer order, derived at publish from carrier_risk into the temp table red_flag_rows
-- (one row per carrier with a red flag: the answer's columns, numbered by `g` from 0 in answer order, risk_score
-- DESC, dot_number). It is what the packed red-flag stores are written from (jobs/fmcsa/red-flag-store.ts), then
-- dropped: /api/red-flags reads those stores, never a table (an index table of (code, state) ranges, published
-- beside them until fmcsa-v5, duplicated them at about a tenth of the derive's CPU). Params: none.
CREATE OR REPLACE TEMP TABLE red_flag_rows AS
SELECT (row_number() OVER (ORDER BY risk_score DESC, dot_number) - 1)::INTEGER AS g,
  dot_number, legal_name, phy_state, safety_rating, risk_score, risk_level, recommendation, red_flag_codes
FROM carrier_risk
WHERE len(red_flag_codes) > 0
ORDER BY g;
