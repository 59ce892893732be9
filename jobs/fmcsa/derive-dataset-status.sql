-- Record counts and as-of dates per dataset (getDatasetStatus). `as_of` is the
-- newest event date in the data, not the load time. Params: none.
CREATE OR REPLACE TABLE dataset_status AS
WITH counts AS (
  SELECT 'census' AS dataset, 'carriers' AS table_name, (SELECT count(*) FROM carriers) AS records, (SELECT max(mcs150_date) FROM carriers) AS as_of
  UNION ALL SELECT 'crash', 'crashes', (SELECT count(*) FROM crashes), (SELECT max(report_date) FROM crashes)
  UNION ALL SELECT 'inspection', 'inspections', (SELECT count(*) FROM inspections), (SELECT max(insp_date) FROM inspections)
  UNION ALL SELECT 'inspection_units', 'inspection_units', (SELECT count(*) FROM inspection_units), NULL
  UNION ALL SELECT 'violations', 'violations', (SELECT count(*) FROM violations), NULL
  UNION ALL SELECT 'sms', 'sms_basics', (SELECT count(*) FROM sms_basics), NULL
  UNION ALL SELECT 'revocation', 'revocations', (SELECT count(*) FROM revocations), (SELECT max(serve_date) FROM revocations)
  UNION ALL SELECT 'authority', 'authority', (SELECT count(*) FROM authority), NULL
  UNION ALL SELECT 'insurance', 'insurance', (SELECT count(*) FROM insurance), (SELECT max(effective_date) FROM insurance)
  UNION ALL SELECT 'oos_orders', 'oos_orders', (SELECT count(*) FROM oos_orders), (SELECT max(oos_date) FROM oos_orders)
  UNION ALL SELECT 'enforcement', 'enforcement_cases', (SELECT count(*) FROM enforcement_cases), (SELECT max(case_open_date) FROM enforcement_cases)
  UNION ALL SELECT 'risk_snapshot', 'carrier_risk', (SELECT count(*) FROM carrier_risk), (SELECT max(as_of) FROM carrier_risk)
)
SELECT c.dataset, c.table_name, c.records, c.as_of, c.records > 0 AS data_available
FROM counts c
ORDER BY c.dataset;
