-- Carrier search over the carriers table alone (the risk columns of the page's rows are added from the packed
-- carrier_snapshot store by carriers.queries.ts): the rows, order and `total` of search-carriers.sql without its
-- join of every match to carrier_risk. Params: $dot (INTEGER|null), $mc (VARCHAR 'MC123'|null), $name (lower-case
-- VARCHAR|null), $state (VARCHAR|null), $limit, $offset. Rank 0 exact name, 1 name prefix, 2 contains (or no name
-- filter); larger fleets first. Columns: identity summary, `total` (matches), `rank`.
SELECT c.dot_number, c.legal_name, c.dba_name, c.phy_city, c.phy_state, c.status_code, c.carrier_operation,
  c.power_units, c.total_drivers, c.docket1 AS mc_number,
  CASE WHEN $name IS NULL THEN 2 WHEN lower(c.legal_name) = $name OR lower(c.dba_name) = $name THEN 0
       WHEN starts_with(lower(c.legal_name), $name) OR starts_with(lower(c.dba_name), $name) THEN 1 ELSE 2 END AS rank,
  count(*) OVER () AS total
FROM carriers c
WHERE ($dot IS NULL OR c.dot_number = $dot)
  AND ($mc IS NULL OR c.docket1 = $mc OR c.docket2 = $mc OR c.docket3 = $mc)
  AND ($state IS NULL OR c.phy_state = $state)
  AND ($name IS NULL OR contains(lower(c.legal_name), $name) OR contains(lower(coalesce(c.dba_name, '')), $name))
ORDER BY rank, c.power_units DESC NULLS LAST, c.dot_number
LIMIT $limit OFFSET $offset;
