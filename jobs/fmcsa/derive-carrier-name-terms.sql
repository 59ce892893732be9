-- Carrier name index, postings (issue 22: /api/carriers?name= without a scan of every name). One row per word of
-- a carrier's lower-cased legal or DBA name that has a letter (its parts in the temp table carrier_name_split,
-- derive-carrier-name-split.sql), in term order, written as the parquet-only table carrier_name_terms, so the
-- carriers having a term are one contiguous range found by row-group min/max:
--  - term: a maximal run of [a-z0-9] with at least one letter in lower(legal_name) or lower(dba_name), the same
--    lower() the search's contains() applies (service/carriers/search-carriers*.sql). Runs of digits alone are
--    left out (every sample name ends in a unique number): a name query without a letter is answered by the scan;
--  - dot_number, power_units, phy_state: the carrier's key, answer order (power_units DESC NULLS LAST, dot_number)
--    and state filter;
--  - flag: 0 when the term is the whole lower-cased name, 1 when the name starts with it, else 2 (a term found in
--    both names, or twice, has one row per occurrence; the search takes the minimum per carrier);
--  - tail: the rest of the lower-cased name after the term (its separators and parts, '' after the last part).
-- A query of [a-z0-9] with a letter is contained in a name exactly when it is contained in one of the name's
-- terms, is the whole name exactly when a flag-0 term equals it, and starts the name exactly when a flag-0/1 term
-- starts with it: the search's matches, ranks and order follow from this table (search-carriers-by-term.sql).
-- A query whose first run of [a-z0-9] (w1) has a letter and is followed by more (w1 r, r starting with a separator)
-- is contained in a name exactly when a term of it ends with w1 and its tail starts with r (the name's run there
-- ends where w1 does, since r starts with a separator); it starts the name when that term is the first (flag 0/1)
-- and equals w1, and is the name when, besides, the tail is r (search-carriers-by-phrase.sql).
WITH termed AS (
  SELECT dot_number, power_units, phy_state, name_lc, parts, seps, unnest(parts) AS term, generate_subscripts(parts, 1) AS i
  FROM carrier_name_split
)
-- A term is a run of [a-z0-9], so "has a letter" is regexp_matches(term, '[a-z]') (half the cost of testing what
-- ltrim of the digits leaves); only the first term can be the whole name. A name has one separator run fewer than
-- parts and is part 1, seps[1], part 2, ..., so part i is followed by seps[i], part i+1, seps[i+1], ... (the tail),
-- and the last part by nothing: the tail is the name after its first i parts and i-1 separators, taken as a
-- substring (length and substr both count code points) rather than by joining the runs again (at full scale the
-- whole statement 9.9-10.0 s against 10.4-10.9 s, the same rows: EXCEPT ALL over 14.2 M postings).
SELECT term, dot_number, power_units, phy_state,
  (CASE WHEN i = 1 THEN (CASE WHEN term = name_lc THEN 0 ELSE 1 END) ELSE 2 END)::UTINYINT AS flag,
  substr(name_lc, (1 + list_sum(list_transform(parts[:i], p -> length(p)))
    + coalesce(list_sum(list_transform(seps[:i - 1], s -> length(s))), 0))::BIGINT) AS tail
FROM termed
WHERE regexp_matches(term, '[a-z]')
ORDER BY term
