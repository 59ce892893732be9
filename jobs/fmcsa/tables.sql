-- FMCSA warehouse domain. carriers, crashes, inspections, inspection_units,
-- violations and carrier_risk are parquet-only (fmcsa.pipeline.ts: their parts are the table
-- files, never copied into serving.duckdb; readers see views over the parquet).
-- DOT numbers are normalised to INTEGER in every table
-- (L&I files pad them to 8 digits); dates are DATE whatever the source format
-- (YYYYMMDD, MM/DD/YYYY, ISO, DD-MON-YY); L&I money stays in thousands (`_k`).

-- One row per carrier: Company Census File (az4n-8mr2, 147 cols) or SMS input census (kjg3-diqy, 42 cols).
CREATE TABLE IF NOT EXISTS carriers (
  dot_number INTEGER NOT NULL,
  legal_name VARCHAR, dba_name VARCHAR,
  status_code VARCHAR, carrier_operation VARCHAR,
  hm_flag BOOLEAN, pc_flag BOOLEAN,
  phy_street VARCHAR, phy_city VARCHAR, phy_state VARCHAR, phy_zip VARCHAR, phy_country VARCHAR,
  mailing_street VARCHAR, mailing_city VARCHAR, mailing_state VARCHAR, mailing_zip VARCHAR,
  phone VARCHAR, cell_phone VARCHAR, fax VARCHAR, email_address VARCHAR,
  mcs150_date DATE, add_date DATE, mcs150_mileage BIGINT, mcs150_mileage_year INTEGER,
  power_units INTEGER, truck_units INTEGER, bus_units INTEGER, total_drivers INTEGER, total_cdl INTEGER,
  docket1 VARCHAR, docket2 VARCHAR, docket3 VARCHAR,
  prior_revoke_flag BOOLEAN, prior_revoke_dot_number INTEGER,
  company_officer_1 VARCHAR, company_officer_2 VARCHAR, dun_bradstreet_no VARCHAR,
  safety_rating VARCHAR, safety_rating_date DATE, review_type VARCHAR, review_date DATE,
  census_format VARCHAR NOT NULL, source_file VARCHAR, content_sha256 VARCHAR
);

-- Crash file (aayw-vxb3, 59 cols): one row per CMV per crash.
CREATE TABLE IF NOT EXISTS crashes (
  crash_id BIGINT NOT NULL, report_state VARCHAR, report_number VARCHAR, report_date DATE, report_seq_no INTEGER,
  dot_number INTEGER, ci_status_code VARCHAR, city VARCHAR, state VARCHAR, truck_bus_ind VARCHAR,
  vin VARCHAR, vehicle_license_number VARCHAR, vehicle_lic_state VARCHAR, hazmat_released VARCHAR,
  vehicles_in_accident INTEGER, fatalities INTEGER, injuries INTEGER, tow_away BOOLEAN, federal_recordable BOOLEAN,
  crash_carrier_name VARCHAR, crash_carrier_state VARCHAR, source_file VARCHAR
);

-- Vehicle Inspection File (fx4q-ay7w, 63 cols): one row per inspection.
CREATE TABLE IF NOT EXISTS inspections (
  inspection_id BIGINT NOT NULL, dot_number INTEGER, report_state VARCHAR, report_number VARCHAR, insp_date DATE,
  insp_level_id INTEGER, ci_status_code VARCHAR, hazmat_placard_req BOOLEAN,
  viol_total INTEGER, oos_total INTEGER, driver_viol_total INTEGER, driver_oos_total INTEGER,
  vehicle_viol_total INTEGER, vehicle_oos_total INTEGER, hazmat_viol_total INTEGER, hazmat_oos_total INTEGER,
  insp_carrier_name VARCHAR, insp_carrier_state VARCHAR, source_file VARCHAR
);

-- Inspections per unit (wt8s-2hbx, 12 cols): the VINs of inspected vehicles.
CREATE TABLE IF NOT EXISTS inspection_units (
  inspection_id BIGINT NOT NULL, insp_unit_id BIGINT, insp_unit_type_id INTEGER, insp_unit_number INTEGER,
  insp_unit_make VARCHAR, insp_unit_license VARCHAR, insp_unit_license_state VARCHAR, vin VARCHAR, source_file VARCHAR
);

-- Inspection violations (876r-jsdb, 12 cols).
CREATE TABLE IF NOT EXISTS violations (
  inspection_id BIGINT NOT NULL, insp_violation_id BIGINT, seq_no INTEGER, part_no VARCHAR, part_no_section VARCHAR,
  insp_viol_unit VARCHAR, insp_unit_id BIGINT, insp_violation_category_id INTEGER, out_of_service BOOLEAN, citation_number VARCHAR,
  source_file VARCHAR
);

-- SMS output (SMS_AB/C_PassProperty 21 cols: measures only; SMS_AB_Pass 36 cols: + percentiles and alerts).
CREATE TABLE IF NOT EXISTS sms_basics (
  dot_number INTEGER NOT NULL, segment VARCHAR NOT NULL,
  insp_total INTEGER, driver_insp_total INTEGER, driver_oos_insp_total INTEGER, vehicle_insp_total INTEGER, vehicle_oos_insp_total INTEGER,
  unsafe_driv_insp_w_viol INTEGER, unsafe_driv_measure DOUBLE, unsafe_driv_pct DOUBLE, unsafe_driv_rd_alert BOOLEAN, unsafe_driv_ac BOOLEAN, unsafe_driv_basic_alert BOOLEAN,
  hos_driv_insp_w_viol INTEGER, hos_driv_measure DOUBLE, hos_driv_pct DOUBLE, hos_driv_rd_alert BOOLEAN, hos_driv_ac BOOLEAN, hos_driv_basic_alert BOOLEAN,
  driv_fit_insp_w_viol INTEGER, driv_fit_measure DOUBLE, driv_fit_pct DOUBLE, driv_fit_rd_alert BOOLEAN, driv_fit_ac BOOLEAN, driv_fit_basic_alert BOOLEAN,
  contr_subst_insp_w_viol INTEGER, contr_subst_measure DOUBLE, contr_subst_pct DOUBLE, contr_subst_rd_alert BOOLEAN, contr_subst_ac BOOLEAN, contr_subst_basic_alert BOOLEAN,
  veh_maint_insp_w_viol INTEGER, veh_maint_measure DOUBLE, veh_maint_pct DOUBLE, veh_maint_rd_alert BOOLEAN, veh_maint_ac BOOLEAN, veh_maint_basic_alert BOOLEAN,
  source_file VARCHAR
);

-- L&I revocations (download / sa6p-acbp): DOT padded to 8 in the file, MM/DD/YYYY dates.
CREATE TABLE IF NOT EXISTS revocations (
  docket_number VARCHAR, dot_number INTEGER, authority_type VARCHAR, serve_date DATE, revocation_type VARCHAR,
  effective_date DATE, involuntary BOOLEAN, source_file VARCHAR
);

-- L&I carrier / authority (6eyk-hxee, 43 cols): one row per docket; money in thousands.
CREATE TABLE IF NOT EXISTS authority (
  docket_number VARCHAR, dot_number INTEGER, common_stat VARCHAR, contract_stat VARCHAR, broker_stat VARCHAR,
  common_app_pend VARCHAR, contract_app_pend VARCHAR, broker_app_pend VARCHAR,
  common_rev_pend VARCHAR, contract_rev_pend VARCHAR, broker_rev_pend VARCHAR,
  property_chk VARCHAR, passenger_chk VARCHAR, hhg_chk VARCHAR,
  min_cov_amount_k INTEGER, cargo_req VARCHAR, bond_req VARCHAR, bipd_file_k INTEGER, cargo_file VARCHAR, bond_file VARCHAR,
  legal_name VARCHAR, dba_name VARCHAR, bus_street_po VARCHAR, bus_city VARCHAR, bus_state_code VARCHAR, bus_zip_code VARCHAR, bus_telno VARCHAR,
  source_file VARCHAR
);

-- L&I insurance (Insur_All_With_History ypjt-5ydn): keyed by docket; amounts in thousands.
CREATE TABLE IF NOT EXISTS insurance (
  docket_number VARCHAR, ins_type_code VARCHAR, ins_class_code VARCHAR, max_cov_amount_k INTEGER, underl_lim_amount_k INTEGER,
  policy_no VARCHAR, effective_date DATE, ins_form_code VARCHAR, name_company VARCHAR, source_file VARCHAR
);

-- Out-of-service orders (p2mt-9ige, 7 cols): ISO dates; in force = ACTIVE and no rescind date.
CREATE TABLE IF NOT EXISTS oos_orders (
  dot_number INTEGER, legal_name VARCHAR, dba_name VARCHAR, oos_date DATE, oos_reason VARCHAR, status VARCHAR, rescind_date DATE,
  source_file VARCHAR
);

-- Enforcement cases: Proofline layout (see README); empty until a file is supplied.
CREATE TABLE IF NOT EXISTS enforcement_cases (
  dot_number INTEGER, case_number VARCHAR, case_open_date DATE, case_closed_date DATE, enforcement_type VARCHAR,
  violation_desc VARCHAR, penalty_amount DOUBLE, status VARCHAR, source_file VARCHAR
);

-- Derived at publish (jobs/fmcsa/derive-*.sql): one row per carrier with the risk features and score.
-- Parquet-only; its columns are those of the score query (riskScoreSelectSql), not this placeholder.
CREATE TABLE IF NOT EXISTS carrier_risk (dot_number INTEGER NOT NULL);
-- Derived at publish: column order of the packed carrier snapshot store (packed/carrier_snapshot:
-- one JSON array per carrier, the carrier_risk row, served by DOT without DuckDB; see README).
CREATE TABLE IF NOT EXISTS carrier_snapshot_columns (pos INTEGER, name VARCHAR);
-- Derived at publish (jobs/fmcsa/carrier-name-index.ts): the carrier search's name index, parquet-only; its columns
-- are those of derive-carrier-name-terms.sql and derive-carrier-name-dict.sql, not these placeholders.
CREATE TABLE IF NOT EXISTS carrier_name_terms (term VARCHAR);
CREATE TABLE IF NOT EXISTS carrier_name_dict (term VARCHAR);
-- Derived at publish: record counts and as-of dates per dataset.
CREATE TABLE IF NOT EXISTS dataset_status (dataset VARCHAR, table_name VARCHAR, records BIGINT, as_of DATE, data_available BOOLEAN);
