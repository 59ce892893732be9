-- Risk features, one row per carrier (temp view carrier_risk_features); the score
-- columns are added from the rule table (ingest/fmcsa/risk-model.ts, riskScoreSql).
-- Column names equal the CarrierFeatures fields (BASICs flattened as <key>_measure/_pct/_alert/_ac).
-- `as_of` is the newest event date in the data (deterministic: the same files
-- give the same snapshot on any day). Params: none. The placeholder
-- /*BASICS_OVER_THRESHOLD*/0 is replaced by basicsOverThresholdSql().
SET VARIABLE fmcsa_as_of = (
  SELECT coalesce(list_max([
    (SELECT max(insp_date) FROM inspections), (SELECT max(report_date) FROM crashes),
    (SELECT max(mcs150_date) FROM carriers), (SELECT max(effective_date) FROM revocations),
    (SELECT max(oos_date) FROM oos_orders)]), current_date)
);
SET VARIABLE fmcsa_has_insp = (SELECT count(*) > 0 FROM inspections);
SET VARIABLE fmcsa_has_authority = (SELECT count(*) > 0 FROM authority);

CREATE OR REPLACE TEMP TABLE f_insp AS
SELECT dot_number,
  count(*)::INTEGER AS inspections_24m,
  count(*) FILTER (WHERE insp_level_id IN (1, 2, 3, 6))::INTEGER AS driver_inspections_24m,
  count(*) FILTER (WHERE insp_level_id IN (1, 2, 3, 6) AND driver_oos_total > 0)::INTEGER AS driver_oos_24m,
  count(*) FILTER (WHERE insp_level_id IN (1, 2, 5, 6))::INTEGER AS vehicle_inspections_24m,
  count(*) FILTER (WHERE insp_level_id IN (1, 2, 5, 6) AND vehicle_oos_total > 0)::INTEGER AS vehicle_oos_24m,
  count(*) FILTER (WHERE hazmat_placard_req)::INTEGER AS hazmat_inspections_24m,
  count(*) FILTER (WHERE hazmat_placard_req AND hazmat_oos_total > 0)::INTEGER AS hazmat_oos_24m
FROM inspections
WHERE dot_number IS NOT NULL AND insp_date > getvariable('fmcsa_as_of') - INTERVAL 24 MONTH
GROUP BY dot_number;

-- Crash file: one row per vehicle, so crashes count distinct CRASH_IDs; only
-- CI_STATUS_CODE C is reliably matched to the DOT (schemas.md §2).
CREATE OR REPLACE TEMP TABLE f_crash AS
SELECT dot_number,
  count(DISTINCT crash_id)::INTEGER AS crashes_24m,
  count(DISTINCT crash_id) FILTER (WHERE fatalities > 0)::INTEGER AS fatal_crashes_24m,
  count(DISTINCT crash_id) FILTER (WHERE injuries > 0)::INTEGER AS injury_crashes_24m,
  count(DISTINCT crash_id) FILTER (WHERE tow_away)::INTEGER AS towaway_crashes_24m
FROM crashes
WHERE dot_number IS NOT NULL AND coalesce(ci_status_code, 'C') = 'C' AND report_date > getvariable('fmcsa_as_of') - INTERVAL 24 MONTH
GROUP BY dot_number;

CREATE OR REPLACE TEMP TABLE f_rev AS
SELECT dot_number, count(*)::INTEGER AS revocations_total,
  count(*) FILTER (WHERE involuntary AND coalesce(effective_date, serve_date) > getvariable('fmcsa_as_of') - INTERVAL 365 DAY)::INTEGER AS revocations_recent,
  bool_or(involuntary) AS any_involuntary
FROM revocations WHERE dot_number IS NOT NULL GROUP BY dot_number;

CREATE OR REPLACE TEMP TABLE f_oos AS
SELECT dot_number, count(*)::INTEGER AS oos_orders_total,
  count(*) FILTER (WHERE status = 'ACTIVE' AND rescind_date IS NULL)::INTEGER AS oos_orders_active
FROM oos_orders WHERE dot_number IS NOT NULL GROUP BY dot_number;

-- L&I: authority ACTIVE when any docket has common, contract or broker status A;
-- BIPD required and on file in thousands (`00000` on file is a fact: 0).
CREATE OR REPLACE TEMP TABLE f_auth AS
SELECT dot_number,
  CASE WHEN bool_or(common_stat = 'A' OR contract_stat = 'A' OR broker_stat = 'A') THEN 'ACTIVE' ELSE 'INACTIVE' END AS authority_status,
  max(min_cov_amount_k) FILTER (WHERE common_stat = 'A' OR contract_stat = 'A')::INTEGER AS bipd_required_k,
  max(bipd_file_k) FILTER (WHERE common_stat = 'A' OR contract_stat = 'A')::INTEGER AS bipd_on_file_k
FROM authority WHERE dot_number IS NOT NULL GROUP BY dot_number;

CREATE OR REPLACE TEMP TABLE f_sms AS
SELECT * FROM sms_basics WHERE dot_number IN (SELECT dot_number FROM carriers)
QUALIFY row_number() OVER (PARTITION BY dot_number ORDER BY CASE segment WHEN 'passenger' THEN 0 ELSE 1 END, source_file) = 1;

-- "Bad" carriers for the chameleon signal: any involuntary revocation, an OOS order in force, or an inactive registration.
CREATE OR REPLACE TEMP TABLE f_bad AS
SELECT dot_number FROM f_rev WHERE any_involuntary
UNION SELECT dot_number FROM f_oos WHERE oos_orders_active > 0;

-- Identity keys: phone (digits, >= 10), e-mail, physical street + 5-digit ZIP, VIN (inspections and crashes).
-- Keys shared by more than 50 carriers (placeholders, big terminals) say nothing about one carrier and are skipped.
-- kind: 1 phone, 2 e-mail, 3 address, 4 VIN. At full scale there are ~12-17 M key rows and nearly all are
-- unique, and a key seen on one row cannot be shared. So:
--  (1) every key is normalised once and only its 64-bit hash is kept (integers: no 15 M strings materialised);
--      the only filters here are cheap ones on the raw columns (present, '@', VIN length), so the normalising
--      expression is evaluated once per row (a filter on the normalised text would evaluate it again);
--  (2) the (kind, hash) pairs seen on two or more rows are found with a window count (faster here than a
--      GROUP BY whose hash table holds ~12 M one-row groups), keeping the rows that hold them;
--  (3) only those rows' keys are normalised again as strings, checked against their hash, filtered exactly
--      (phone length and placeholders) and grouped exactly in f_shared.
-- A hash collision or an invalid key only lets an extra row through to the exact stage, so f_keys holds
-- exactly the valid keys of every string group of two or more rows.
-- Normalisation: phone = every digit (the usual `(NNN) NNN-NNNN` takes a replace() fast path; anything else
-- the regular expression); address = upper-case letters and digits of the street (a street already in
-- [A-Z0-9 ] just loses its spaces) + '|' + the ZIP's first 5 characters; e-mail = the column as loaded
-- (the readers store lower(trim(EMAIL_ADDRESS))); VIN = the column as loaded (upper-case, trimmed).
CREATE OR REPLACE TEMP MACRO f_phone_key(p) AS CASE WHEN regexp_full_match(p, '[0-9() -]*')
  THEN replace(replace(replace(replace(p, '(', ''), ')', ''), ' ', ''), '-', '') ELSE regexp_replace(p, '[^0-9]', '', 'g') END;
CREATE OR REPLACE TEMP MACRO f_address_key(street, zip) AS CASE WHEN regexp_full_match(street, '[A-Z0-9 ]*')
  THEN replace(street, ' ', '') ELSE upper(regexp_replace(street, '[^A-Za-z0-9]', '', 'g')) END || '|' || left(zip, 5);

CREATE OR REPLACE TEMP TABLE f_key_candidates AS
WITH k AS (
  SELECT dot_number, 1::TINYINT AS kind, hash(f_phone_key(phone)) AS h FROM carriers WHERE phone IS NOT NULL
  UNION ALL SELECT dot_number, 2::TINYINT, hash(email_address) FROM carriers WHERE email_address LIKE '%@%'
  UNION ALL SELECT dot_number, 3::TINYINT, hash(f_address_key(phy_street, phy_zip)) FROM carriers WHERE phy_street IS NOT NULL AND phy_zip IS NOT NULL
  UNION ALL SELECT i.dot_number, 4::TINYINT, hash(u.vin) FROM inspection_units u JOIN inspections i USING (inspection_id) WHERE i.dot_number IS NOT NULL AND length(u.vin) >= 11
  UNION ALL SELECT dot_number, 4::TINYINT, hash(vin) FROM crashes WHERE dot_number IS NOT NULL AND length(vin) >= 11
)
SELECT DISTINCT dot_number, kind, h FROM k QUALIFY count(*) OVER (PARTITION BY kind, h) >= 2;

CREATE OR REPLACE TEMP TABLE f_keys AS
WITH k AS (
  SELECT c.dot_number, 1::TINYINT AS kind, f_phone_key(c.phone) AS k
    FROM carriers c SEMI JOIN (SELECT dot_number FROM f_key_candidates WHERE kind = 1) x USING (dot_number) WHERE c.phone IS NOT NULL
  UNION ALL SELECT c.dot_number, 2::TINYINT, c.email_address
    FROM carriers c SEMI JOIN (SELECT dot_number FROM f_key_candidates WHERE kind = 2) x USING (dot_number) WHERE c.email_address LIKE '%@%'
  UNION ALL SELECT c.dot_number, 3::TINYINT, f_address_key(c.phy_street, c.phy_zip)
    FROM carriers c SEMI JOIN (SELECT dot_number FROM f_key_candidates WHERE kind = 3) x USING (dot_number) WHERE c.phy_street IS NOT NULL AND c.phy_zip IS NOT NULL
  UNION ALL SELECT i.dot_number, 4::TINYINT, u.vin
    FROM inspection_units u JOIN inspections i USING (inspection_id) SEMI JOIN (SELECT dot_number FROM f_key_candidates WHERE kind = 4) x ON i.dot_number = x.dot_number
    WHERE length(u.vin) >= 11
  UNION ALL SELECT cr.dot_number, 4::TINYINT, cr.vin
    FROM crashes cr SEMI JOIN (SELECT dot_number FROM f_key_candidates WHERE kind = 4) x USING (dot_number) WHERE length(cr.vin) >= 11
)
SELECT DISTINCT k.dot_number, k.kind, k.k FROM k SEMI JOIN f_key_candidates c ON c.dot_number = k.dot_number AND c.kind = k.kind AND c.h = hash(k.k)
WHERE (k.kind = 1 AND length(k.k) >= 10 AND k.k NOT SIMILAR TO '0+|9+|1234567890') OR k.kind IN (2, 3, 4);
DROP TABLE f_key_candidates;

CREATE OR REPLACE TEMP TABLE f_shared AS
WITH g AS (SELECT kind, k FROM f_keys GROUP BY kind, k HAVING count(*) BETWEEN 2 AND 50),
pairs AS (
  SELECT a.dot_number, a.kind, b.dot_number AS other
  FROM f_keys a JOIN g USING (kind, k) JOIN f_keys b ON b.kind = a.kind AND b.k = a.k AND b.dot_number <> a.dot_number
)
SELECT p.dot_number,
  count(DISTINCT other) FILTER (WHERE kind = 1)::INTEGER AS shared_phone_carriers,
  count(DISTINCT other) FILTER (WHERE kind = 2)::INTEGER AS shared_email_carriers,
  count(DISTINCT other) FILTER (WHERE kind = 3)::INTEGER AS shared_address_carriers,
  count(DISTINCT other) FILTER (WHERE kind = 4)::INTEGER AS shared_vin_carriers,
  count(DISTINCT other) FILTER (WHERE other IN (SELECT dot_number FROM f_bad))::INTEGER AS shared_with_revoked_carriers
FROM pairs p GROUP BY p.dot_number;

-- A view: the score (riskScoreSelectSql) reads it once into carrier_risk, no intermediate table.
CREATE OR REPLACE TEMP VIEW carrier_risk_features AS
WITH base AS (
  SELECT
    c.dot_number, c.legal_name, c.phy_state, c.status_code,
    CASE WHEN c.pc_flag THEN 'passenger' WHEN c.hm_flag THEN 'hazmat' ELSE 'general' END AS carrier_class,
    CASE WHEN a.dot_number IS NOT NULL THEN a.authority_status WHEN getvariable('fmcsa_has_authority') THEN 'NONE' END AS authority_status,
    date_diff('day', c.add_date, getvariable('fmcsa_as_of'))::INTEGER AS authority_age_days,
    coalesce(r.revocations_total, 0) AS revocations_total,
    coalesce(r.revocations_recent, 0) AS revocations_recent,
    coalesce(o.oos_orders_active, 0) AS oos_orders_active,
    coalesce(o.oos_orders_total, 0) AS oos_orders_total,
    c.safety_rating,
    date_diff('day', c.mcs150_date, getvariable('fmcsa_as_of'))::INTEGER AS mcs150_age_days,
    c.power_units, c.total_drivers AS drivers,
    -- Inspection file when loaded; otherwise the SMS file's 24-month counters.
    CASE WHEN getvariable('fmcsa_has_insp') THEN coalesce(i.inspections_24m, 0) ELSE coalesce(s.insp_total, 0) END AS inspections_24m,
    CASE WHEN getvariable('fmcsa_has_insp') THEN coalesce(i.driver_inspections_24m, 0) ELSE coalesce(s.driver_insp_total, 0) END AS driver_inspections_24m,
    CASE WHEN getvariable('fmcsa_has_insp') THEN coalesce(i.driver_oos_24m, 0) ELSE coalesce(s.driver_oos_insp_total, 0) END AS driver_oos_24m,
    CASE WHEN getvariable('fmcsa_has_insp') THEN coalesce(i.vehicle_inspections_24m, 0) ELSE coalesce(s.vehicle_insp_total, 0) END AS vehicle_inspections_24m,
    CASE WHEN getvariable('fmcsa_has_insp') THEN coalesce(i.vehicle_oos_24m, 0) ELSE coalesce(s.vehicle_oos_insp_total, 0) END AS vehicle_oos_24m,
    coalesce(i.hazmat_inspections_24m, 0) AS hazmat_inspections_24m,
    coalesce(i.hazmat_oos_24m, 0) AS hazmat_oos_24m,
    coalesce(cr.crashes_24m, 0) AS crashes_24m,
    coalesce(cr.fatal_crashes_24m, 0) AS fatal_crashes_24m,
    coalesce(cr.injury_crashes_24m, 0) AS injury_crashes_24m,
    coalesce(cr.towaway_crashes_24m, 0) AS towaway_crashes_24m,
    s.unsafe_driv_measure, s.unsafe_driv_pct, s.unsafe_driv_basic_alert AS unsafe_driv_alert, s.unsafe_driv_ac,
    s.hos_driv_measure, s.hos_driv_pct, s.hos_driv_basic_alert AS hos_driv_alert, s.hos_driv_ac,
    s.driv_fit_measure, s.driv_fit_pct, s.driv_fit_basic_alert AS driv_fit_alert, s.driv_fit_ac,
    s.contr_subst_measure, s.contr_subst_pct, s.contr_subst_basic_alert AS contr_subst_alert, s.contr_subst_ac,
    s.veh_maint_measure, s.veh_maint_pct, s.veh_maint_basic_alert AS veh_maint_alert, s.veh_maint_ac,
    -- HM Compliance and Crash Indicator are in no public file (FAST Act).
    CAST(NULL AS DOUBLE) AS hm_compliance_measure, CAST(NULL AS DOUBLE) AS hm_compliance_pct, CAST(NULL AS BOOLEAN) AS hm_compliance_alert, CAST(NULL AS BOOLEAN) AS hm_compliance_ac,
    CAST(NULL AS DOUBLE) AS crash_ind_measure, CAST(NULL AS DOUBLE) AS crash_ind_pct, CAST(NULL AS BOOLEAN) AS crash_ind_alert, CAST(NULL AS BOOLEAN) AS crash_ind_ac,
    a.bipd_on_file_k, a.bipd_required_k,
    c.prior_revoke_flag,
    coalesce(sh.shared_phone_carriers, 0) AS shared_phone_carriers,
    coalesce(sh.shared_email_carriers, 0) AS shared_email_carriers,
    coalesce(sh.shared_address_carriers, 0) AS shared_address_carriers,
    coalesce(sh.shared_vin_carriers, 0) AS shared_vin_carriers,
    coalesce(sh.shared_with_revoked_carriers, 0) AS shared_with_revoked_carriers,
    getvariable('fmcsa_as_of')::DATE AS as_of
  FROM carriers c
  LEFT JOIN f_insp i USING (dot_number)
  LEFT JOIN f_crash cr USING (dot_number)
  LEFT JOIN f_rev r USING (dot_number)
  LEFT JOIN f_oos o USING (dot_number)
  LEFT JOIN f_auth a USING (dot_number)
  LEFT JOIN f_sms s USING (dot_number)
  LEFT JOIN f_shared sh USING (dot_number)
)
SELECT *,
  -- Rates in percent, only from MIN_INSPECTIONS_FOR_RATE (3) inspections of that kind.
  CASE WHEN driver_inspections_24m >= 3 THEN round(100.0 * driver_oos_24m / driver_inspections_24m, 2) END AS driver_oos_rate,
  CASE WHEN vehicle_inspections_24m >= 3 THEN round(100.0 * vehicle_oos_24m / vehicle_inspections_24m, 2) END AS vehicle_oos_rate,
  CASE WHEN hazmat_inspections_24m >= 3 THEN round(100.0 * hazmat_oos_24m / hazmat_inspections_24m, 2) END AS hazmat_oos_rate,
  CASE WHEN power_units > 0 THEN round(crashes_24m / power_units, 4) END AS crashes_per_power_unit,
  (/*BASICS_OVER_THRESHOLD*/0)::INTEGER AS basics_over_threshold,
  ((CASE WHEN unsafe_driv_ac THEN 1 ELSE 0 END) + (CASE WHEN hos_driv_ac THEN 1 ELSE 0 END) + (CASE WHEN driv_fit_ac THEN 1 ELSE 0 END)
    + (CASE WHEN contr_subst_ac THEN 1 ELSE 0 END) + (CASE WHEN veh_maint_ac THEN 1 ELSE 0 END))::INTEGER AS basics_acute_critical
FROM base;
