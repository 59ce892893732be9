-- Warm-up keys of the registry domain (service/warmup): one real value per key the read routes take.
-- Params: none.
-- Columns: ticker (a primary active ticker), person (a person's name), leaf_hash (an origin leaf); NULL when absent.
SELECT
  (SELECT min(ticker) FROM company_lookup WHERE is_primary AND status = 'active') AS ticker,
  (SELECT min(person_name) FROM people) AS person,
  (SELECT min(leaf_hash) FROM origin_leaves) AS leaf_hash
