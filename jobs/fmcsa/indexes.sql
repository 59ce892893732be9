-- Lookup keys of the fmcsa serving database (ART: 1-2 ms point lookups). The
-- parquet-only tables (carriers, crashes, inspections, inspection_units,
-- violations, carrier_risk) are not in this database and have no index: a
-- per-DOT read scans their parquet (row-group min/max skip what they can; see
-- fmcsa.pipeline.ts), except what the packed stores hold (carrier_risk and
-- census rows, crashes, inspections, filings: jobs/fmcsa/serving-stores.ts).
CREATE INDEX IF NOT EXISTS sms_basics_dot_idx ON sms_basics (dot_number);
CREATE INDEX IF NOT EXISTS revocations_dot_idx ON revocations (dot_number);
CREATE INDEX IF NOT EXISTS authority_dot_idx ON authority (dot_number);
CREATE INDEX IF NOT EXISTS insurance_docket_idx ON insurance (docket_number);
CREATE INDEX IF NOT EXISTS oos_orders_dot_idx ON oos_orders (dot_number);
CREATE INDEX IF NOT EXISTS enforcement_dot_idx ON enforcement_cases (dot_number);
