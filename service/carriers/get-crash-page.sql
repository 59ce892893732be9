-- One page of a carrier's (or a VIN's) crashes, newest first, with every vehicle row of each crash listed.
-- Params: $dot INTEGER or NULL, $vin VARCHAR or NULL (one of the two), $limit INTEGER (crashes), $offset INTEGER (crashes
-- skipped: cursor pages, service/platform/pagination.ts; the order ends with the unique crash_id).
WITH matched AS (
  -- Two branches with one plain predicate each, so each filter reaches the parquet scan (an OR of both would not).
  SELECT * EXCLUDE (source_file) FROM crashes WHERE dot_number = $dot
  UNION ALL
  SELECT * EXCLUDE (source_file) FROM crashes WHERE vin = $vin AND $dot IS NULL
),
page AS (
  SELECT crash_id, max(report_date) AS newest FROM matched GROUP BY crash_id
  ORDER BY newest DESC NULLS LAST, crash_id LIMIT $limit OFFSET $offset
)
SELECT m.* FROM matched m JOIN page p USING (crash_id)
ORDER BY p.newest DESC NULLS LAST, m.crash_id, m.report_seq_no
