-- Carrier search by name through the name index built at publish (jobs/fmcsa/derive-carrier-name-terms.sql), for a
-- name of [a-z0-9] with at least one letter: the same matches, ranks, order, `total` and page as
-- search-carriers-page.sql with $dot and $mc null, without reading carriers. Params: $name (lower-case),
-- $state (VARCHAR|null), $limit, $offset. Rank 0 exact name, 1 name prefix, 2 contains; larger fleets first, then DOT.
-- Columns: dot_number, rank, total (matches). carriers.queries.ts adds the row's columns from the packed stores.
WITH hits AS (
  SELECT dot_number, any_value(power_units) AS power_units,
    min(CASE WHEN flag = 0 AND term = $name THEN 0 WHEN flag <= 1 AND starts_with(term, $name) THEN 1 ELSE 2 END) AS rank
  FROM carrier_name_terms
  WHERE term IN (SELECT term FROM carrier_name_dict WHERE contains(term, $name)) AND ($state IS NULL OR phy_state = $state)
  GROUP BY dot_number
)
SELECT dot_number, rank, count(*) OVER () AS total
FROM hits
ORDER BY rank, power_units DESC NULLS LAST, dot_number
LIMIT $limit OFFSET $offset;
