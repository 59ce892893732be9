-- Lookup keys of the fmcsa serving database (ART: 1-2 ms point lookups).
CREATE UNIQUE INDEX IF NOT EXISTS carriers_dot_idx ON carriers (dot_number);
CREATE UNIQUE INDEX IF NOT EXISTS carrier_risk_dot_idx ON carrier_risk (dot_number);
CREATE INDEX IF NOT EXISTS crashes_dot_idx ON crashes (dot_number);
CREATE INDEX IF NOT EXISTS crashes_vin_idx ON crashes (vin);
CREATE INDEX IF NOT EXISTS inspections_dot_idx ON inspections (dot_number);
CREATE INDEX IF NOT EXISTS inspection_units_insp_idx ON inspection_units (inspection_id);
CREATE INDEX IF NOT EXISTS violations_insp_idx ON violations (inspection_id);
CREATE INDEX IF NOT EXISTS sms_basics_dot_idx ON sms_basics (dot_number);
CREATE INDEX IF NOT EXISTS revocations_dot_idx ON revocations (dot_number);
CREATE INDEX IF NOT EXISTS authority_dot_idx ON authority (dot_number);
CREATE INDEX IF NOT EXISTS insurance_docket_idx ON insurance (docket_number);
CREATE INDEX IF NOT EXISTS oos_orders_dot_idx ON oos_orders (dot_number);
CREATE INDEX IF NOT EXISTS enforcement_dot_idx ON enforcement_cases (dot_number);
CREATE UNIQUE INDEX IF NOT EXISTS carrier_snapshot_dot_idx ON carrier_snapshot (dot_number);
