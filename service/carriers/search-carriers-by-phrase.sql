-- Carrier search by a phrase through the name index built at publish (jobs/fmcsa/derive-carrier-name-terms.sql):
-- for a name whose first run of [a-z0-9] (w1) has a letter and is followed by a separator and anything else (r,
-- e.g. `lone star`, `den truck`, `golden trucking inc 28730`, `a-1 eagle`), the same matches, ranks, order, `total`
-- and page as search-carriers-page.sql with $dot and $mc null, without reading carriers. Params: $name (lower-case),
-- $state (VARCHAR|null), $limit, $offset. Columns: dot_number, rank, total (matches). carriers.queries.ts adds the
-- row's columns from the packed stores.
-- A name contains w1 r exactly when one of its terms ends with w1 and that term's tail (the rest of the name) starts
-- with r; it starts with it (rank 1) when that term is its first (flag 0/1) and is w1, and is it (rank 0) when,
-- besides, the tail is r. Only the postings of the dictionary terms ending with w1 are read (row groups of other
-- terms are skipped by their min/max); w1 and r are expressions of $name alone, folded before the plan. They are
-- written out where used, not taken from a CTE: with a CTE the terms' filter did not reach the postings scan, which
-- then read every posting (600-900 ms against 45-150 at full scale, one thread).
WITH hits AS (
  SELECT t.dot_number, any_value(t.power_units) AS power_units,
    min(CASE WHEN t.flag <= 1 AND t.term = regexp_extract($name, '^[a-z0-9]+')
             THEN (CASE WHEN t.tail = substr($name, length(regexp_extract($name, '^[a-z0-9]+')) + 1) THEN 0 ELSE 1 END)
             ELSE 2 END) AS rank
  FROM carrier_name_terms t
  WHERE t.term IN (SELECT term FROM carrier_name_dict WHERE ends_with(term, regexp_extract($name, '^[a-z0-9]+')))
    AND starts_with(t.tail, substr($name, length(regexp_extract($name, '^[a-z0-9]+')) + 1))
    AND ($state IS NULL OR t.phy_state = $state)
  GROUP BY t.dot_number
)
SELECT dot_number, rank, count(*) OVER () AS total
FROM hits
ORDER BY rank, power_units DESC NULLS LAST, dot_number
LIMIT $limit OFFSET $offset;
