-- Carrier name index, postings (issue 22: /api/carriers?name= without a scan of every name). One row per word of
-- a carrier's lower-cased legal or DBA name that has a letter, in term order, written as the parquet-only table
-- carrier_name_terms, so the carriers having a term are one contiguous range found by row-group min/max:
--  - term: a maximal run of [a-z0-9] with at least one letter in lower(legal_name) or lower(dba_name), the same
--    lower() the search's contains() applies (service/carriers/search-carriers*.sql). Runs of digits alone are
--    left out (every sample name ends in a unique number): a name query without a letter is answered by the scan;
--  - dot_number, power_units, phy_state: the carrier's key, answer order (power_units DESC NULLS LAST, dot_number)
--    and state filter;
--  - flag: 0 when the term is the whole lower-cased name, 1 when the name starts with it, else 2 (a term found in
--    both names, or twice, has one row per occurrence; the search takes the minimum per carrier).
-- A query of [a-z0-9] with a letter is contained in a name exactly when it is contained in one of the name's
-- terms, is the whole name exactly when a flag-0 term equals it, and starts the name exactly when a flag-0/1 term
-- starts with it: the search's matches, ranks and order follow from this table (search-carriers-by-term.sql).
WITH named AS (
  SELECT dot_number, power_units, phy_state, lower(legal_name) AS nm FROM carriers WHERE legal_name IS NOT NULL
  UNION ALL
  SELECT dot_number, power_units, phy_state, lower(dba_name) AS nm FROM carriers WHERE dba_name IS NOT NULL
), split AS (
  SELECT dot_number, power_units, phy_state, nm, string_split_regex(nm, '[^a-z0-9]+') AS parts FROM named
), termed AS (
  SELECT dot_number, power_units, phy_state, nm, unnest(parts) AS term, generate_subscripts(parts, 1) AS i FROM split
)
-- A term is a run of [a-z0-9], so "has a letter" is regexp_matches(term, '[a-z]') (half the cost of testing what
-- ltrim of the digits leaves); only the first term can be the whole name.
SELECT term, dot_number, power_units, phy_state,
  (CASE WHEN i = 1 THEN (CASE WHEN term = nm THEN 0 ELSE 1 END) ELSE 2 END)::UTINYINT AS flag
FROM termed
WHERE regexp_matches(term, '[a-z]')
ORDER BY term
