-- Change detection between two published FMCSA snapshots, set-wise over their carrier_risk parquet files
-- (views prev_rows and next_rows, created by changes.queries.ts) for the watched carriers only.
-- Params: $dots JSON array of watched DOT numbers.
-- Result: one row per watched carrier whose row changed in a monitored way: dot_number, kinds (VARCHAR[]),
-- prev_row and next_row (the two carrier_risk rows as JSON).
-- Kinds (docs/monitoring.md): authority_granted / authority_revoked (authority_status to / from ACTIVE),
-- insurance_filed / insurance_cancelled (BIPD on file from / to none), oos_added / oos_rescinded (active OOS
-- orders up / down), crash_added (fatal or injury crashes in 24 months up), risk_changed (risk level or
-- recommendation), red_flag_added / red_flag_cleared, basic_alert_raised / basic_alert_cleared (any SMS BASIC alert).
WITH watched AS (SELECT DISTINCT unnest(from_json($dots, '["INTEGER"]')) AS dot_number),
p AS (SELECT * FROM prev_rows WHERE dot_number IN (SELECT dot_number FROM watched)),
n AS (SELECT * FROM next_rows WHERE dot_number IN (SELECT dot_number FROM watched)),
j AS (
  SELECT n.dot_number,
    list_filter([
      CASE WHEN coalesce(p.authority_status, '') <> 'ACTIVE' AND n.authority_status = 'ACTIVE' THEN 'authority_granted' END,
      CASE WHEN p.authority_status = 'ACTIVE' AND coalesce(n.authority_status, '') <> 'ACTIVE' THEN 'authority_revoked' END,
      CASE WHEN coalesce(p.bipd_on_file_k, 0) = 0 AND coalesce(n.bipd_on_file_k, 0) > 0 THEN 'insurance_filed' END,
      CASE WHEN coalesce(p.bipd_on_file_k, 0) > 0 AND coalesce(n.bipd_on_file_k, 0) = 0 THEN 'insurance_cancelled' END,
      CASE WHEN coalesce(n.oos_orders_active, 0) > coalesce(p.oos_orders_active, 0) THEN 'oos_added' END,
      CASE WHEN coalesce(n.oos_orders_active, 0) < coalesce(p.oos_orders_active, 0) THEN 'oos_rescinded' END,
      CASE WHEN coalesce(n.fatal_crashes_24m, 0) > coalesce(p.fatal_crashes_24m, 0)
             OR coalesce(n.injury_crashes_24m, 0) > coalesce(p.injury_crashes_24m, 0) THEN 'crash_added' END,
      CASE WHEN p.risk_level IS DISTINCT FROM n.risk_level OR p.recommendation IS DISTINCT FROM n.recommendation THEN 'risk_changed' END,
      CASE WHEN len(list_filter(coalesce(n.red_flag_codes, []), x -> NOT list_contains(coalesce(p.red_flag_codes, []), x))) > 0 THEN 'red_flag_added' END,
      CASE WHEN len(list_filter(coalesce(p.red_flag_codes, []), x -> NOT list_contains(coalesce(n.red_flag_codes, []), x))) > 0 THEN 'red_flag_cleared' END,
      CASE WHEN (NOT coalesce(p.unsafe_driv_alert, false) AND coalesce(n.unsafe_driv_alert, false))
             OR (NOT coalesce(p.hos_driv_alert, false) AND coalesce(n.hos_driv_alert, false))
             OR (NOT coalesce(p.driv_fit_alert, false) AND coalesce(n.driv_fit_alert, false))
             OR (NOT coalesce(p.contr_subst_alert, false) AND coalesce(n.contr_subst_alert, false))
             OR (NOT coalesce(p.veh_maint_alert, false) AND coalesce(n.veh_maint_alert, false))
             OR (NOT coalesce(p.hm_compliance_alert, false) AND coalesce(n.hm_compliance_alert, false))
             OR (NOT coalesce(p.crash_ind_alert, false) AND coalesce(n.crash_ind_alert, false)) THEN 'basic_alert_raised' END,
      CASE WHEN (coalesce(p.unsafe_driv_alert, false) AND NOT coalesce(n.unsafe_driv_alert, false))
             OR (coalesce(p.hos_driv_alert, false) AND NOT coalesce(n.hos_driv_alert, false))
             OR (coalesce(p.driv_fit_alert, false) AND NOT coalesce(n.driv_fit_alert, false))
             OR (coalesce(p.contr_subst_alert, false) AND NOT coalesce(n.contr_subst_alert, false))
             OR (coalesce(p.veh_maint_alert, false) AND NOT coalesce(n.veh_maint_alert, false))
             OR (coalesce(p.hm_compliance_alert, false) AND NOT coalesce(n.hm_compliance_alert, false))
             OR (coalesce(p.crash_ind_alert, false) AND NOT coalesce(n.crash_ind_alert, false)) THEN 'basic_alert_cleared' END
    ], k -> k IS NOT NULL) AS kinds,
    to_json(p) AS prev_row,
    to_json(n) AS next_row
  FROM p JOIN n ON n.dot_number = p.dot_number
)
SELECT dot_number, kinds, prev_row::VARCHAR AS prev_row, next_row::VARCHAR AS next_row
FROM j WHERE len(kinds) > 0
ORDER BY dot_number
