-- Crash counts of a carrier (or a VIN) over every crash, each crash counted once by its first vehicle row (lowest
-- report_seq_no), as the page's rows show it. Params: $dot INTEGER or NULL, $vin VARCHAR or NULL.
-- Columns: total_crashes, fatal, injury, tow_away (INTEGER).
WITH firsts AS (
  SELECT crash_id, arg_min(fatalities, report_seq_no) AS fatalities, arg_min(injuries, report_seq_no) AS injuries,
         arg_min(tow_away, report_seq_no) AS tow_away
  FROM (
    -- Two branches with one plain predicate each, so each filter reaches the parquet scan.
    SELECT * FROM crashes WHERE dot_number = $dot
    UNION ALL
    SELECT * FROM crashes WHERE vin = $vin AND $dot IS NULL
  )
  GROUP BY crash_id
)
SELECT count(*)::INTEGER AS total_crashes,
       count(*) FILTER (WHERE fatalities > 0)::INTEGER AS fatal,
       count(*) FILTER (WHERE injuries > 0)::INTEGER AS injury,
       count(*) FILTER (WHERE tow_away)::INTEGER AS tow_away
FROM firsts
