-- Red flags pre-sorted for /api/red-flags (service/carriers/search-red-flags-index.sql), derived at publish from
-- carrier_risk in two serving tables (issue 22: a page is a range read, not a scan and sort of carrier_risk):
--  - red_flag_rows: one row per flagged carrier with the answer's columns, in answer order (risk_score DESC,
--    dot_number) numbered by `g` from 0;
--  - red_flag_index: one narrow row per (code, state_key) a carrier answers, code '*' standing for "any flag" and
--    state_key '*' for "any state" (a carrier without phy_state only under '*'), stored in (code, state_key, g) order
--    with `pos` numbering the rows of each (code, state_key) from 0. The rows of a filter are one contiguous range,
--    found by row-group min/max (zonemaps), and page k of it is pos in [offset, offset + limit).
CREATE OR REPLACE TABLE red_flag_rows AS
SELECT (row_number() OVER (ORDER BY risk_score DESC, dot_number) - 1)::INTEGER AS g,
  dot_number, legal_name, phy_state, safety_rating, risk_score, risk_level, recommendation, red_flag_codes
FROM carrier_risk
WHERE len(red_flag_codes) > 0
ORDER BY g;

CREATE OR REPLACE TABLE red_flag_index AS
WITH coded AS (
  SELECT unnest(list_concat(['*'], list_distinct(red_flag_codes))) AS code, phy_state, g, risk_score FROM red_flag_rows
), keyed AS (
  SELECT code, '*' AS state_key, g, risk_score FROM coded
  UNION ALL
  SELECT code, phy_state AS state_key, g, risk_score FROM coded WHERE phy_state IS NOT NULL
)
SELECT code, state_key, (row_number() OVER (PARTITION BY code, state_key ORDER BY g) - 1)::INTEGER AS pos, g, risk_score
FROM keyed
ORDER BY code, state_key, g;
