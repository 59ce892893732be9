-- Warm-up keys of the FMCSA domain (service/warmup): one real value per key the read routes take.
-- Params: none.
-- Columns: dot (a carrier's DOT number), name_word (a word of 4+ letters of its legal name), state (its state),
--          vin (a crash's VIN); NULL when absent.
SELECT
  c.dot_number AS dot,
  (SELECT max(w) FROM (SELECT unnest(string_split(c.legal_name, ' ')) AS w) WHERE regexp_matches(w, '^[A-Za-z]{4,}$')) AS name_word,
  c.phy_state AS state,
  (SELECT min(vin) FROM crashes WHERE vin IS NOT NULL) AS vin
FROM (
  SELECT dot_number, legal_name, phy_state FROM carriers
  WHERE regexp_matches(legal_name, '[A-Za-z]{4,}') ORDER BY dot_number LIMIT 1
) c
