/**
 * DuckDB-native readers of the FMCSA bulk files. Each format maps its source
 * columns (canonical upper-case names, whatever the file's case or order) to
 * the warehouse columns with one SQL expression each; `read_csv` parses with
 * every column declared (no sniffing), the key column typed and NOT NULL so a
 * bad or empty key lands in DuckDB's reject table with its line number, and
 * the rows go straight to a parquet part. This is the heavy lifting: DuckDB's
 * reader is 3-6x csv-parse on this machine (shared notes, tech.md).
 *
 * Date formats (schemas.md §7): YYYYMMDD[ HHMM] (census, MCMIS), MM/DD/YYYY
 * (L&I), ISO (OOS orders), DD-MON-YY (SMS). L&I money is in thousands.
 */
import type { FmcsaKind } from '../../ingest/fmcsa/formats.ts';

const s = (c: string) => `NULLIF(trim("${c}"), '')`;
const int = (c: string) => `TRY_CAST(trim("${c}") AS INTEGER)`;
const big = (c: string) => `TRY_CAST(trim("${c}") AS BIGINT)`;
const dbl = (c: string) => `TRY_CAST(trim("${c}") AS DOUBLE)`;
/** `15%` → 15; text such as `Less than 5 vehicle inspections` → NULL. */
const pct = (c: string) => `TRY_CAST(replace(trim("${c}"), '%', '') AS DOUBLE)`;
/** Y/N, true/false (re-serialised census), X (census cargo flags). */
const flag = (c: string) =>
  `(CASE upper(trim("${c}")) WHEN 'Y' THEN true WHEN 'TRUE' THEN true WHEN 'X' THEN true WHEN 'N' THEN false WHEN 'FALSE' THEN false END)`;
const ymd = (c: string) => `CAST(try_strptime(left(trim("${c}"), 8), '%Y%m%d') AS DATE)`;
const mdy = (c: string) => `CAST(try_strptime(trim("${c}"), '%m/%d/%Y') AS DATE)`;
const dmy = (c: string) => `CAST(try_strptime(trim("${c}"), '%d-%b-%y') AS DATE)`;
const iso = (c: string) => `TRY_CAST(trim("${c}") AS DATE)`;
/** Dockets as `MC421775`: hyphens and spaces removed (`MC-424836`), upper case. */
const docket = (c: string) => `NULLIF(upper(regexp_replace(trim("${c}"), '[- ]', '', 'g')), '')`;
const prefixed = (p: string, n: string) =>
  `(CASE WHEN TRY_CAST(trim("${n}") AS BIGINT) > 0 THEN coalesce(NULLIF(upper(trim("${p}")), ''), 'MC') || CAST(TRY_CAST(trim("${n}") AS BIGINT) AS VARCHAR) END)`;
/** L&I money: `01000` thousands → 1000 (k$). */
const thousands = int;

export interface ReaderSpec {
  /** Source columns read with a non-VARCHAR type (keys): cast failures become rejects with line numbers. */
  keys: Record<string, 'INTEGER' | 'BIGINT'>;
  /** Key columns that must be present (empty → reject). */
  notNull: string[];
  /** Warehouse column → SQL expression over the source columns. */
  select: Record<string, string>;
  /** Extra constant columns. */
  constants?: Record<string, string>;
}

const basics = (prefix: string, passenger: boolean) => ({
  [`${prefix.toLowerCase()}_insp_w_viol`]: int(`${prefix}_INSP_W_VIOL`),
  [`${prefix.toLowerCase()}_measure`]: dbl(`${prefix}_MEASURE`),
  [`${prefix.toLowerCase()}_pct`]: passenger ? pct(`${prefix}_PCT`) : 'CAST(NULL AS DOUBLE)',
  [`${prefix.toLowerCase()}_rd_alert`]: passenger ? flag(`${prefix}_RD_ALERT`) : 'CAST(NULL AS BOOLEAN)',
  [`${prefix.toLowerCase()}_ac`]: flag(`${prefix}_AC`),
  [`${prefix.toLowerCase()}_basic_alert`]: passenger ? flag(`${prefix}_BASIC_ALERT`) : 'CAST(NULL AS BOOLEAN)',
});
const SMS_BASIC_PREFIXES = ['UNSAFE_DRIV', 'HOS_DRIV', 'DRIV_FIT', 'CONTR_SUBST', 'VEH_MAINT'];
const sms = (passenger: boolean): ReaderSpec => ({
  keys: { DOT_NUMBER: 'INTEGER' },
  notNull: ['DOT_NUMBER'],
  select: {
    dot_number: '"DOT_NUMBER"',
    segment: passenger ? `'passenger'` : `'property'`,
    insp_total: int('INSP_TOTAL'),
    driver_insp_total: int('DRIVER_INSP_TOTAL'),
    driver_oos_insp_total: int('DRIVER_OOS_INSP_TOTAL'),
    vehicle_insp_total: int('VEHICLE_INSP_TOTAL'),
    vehicle_oos_insp_total: int('VEHICLE_OOS_INSP_TOTAL'),
    ...Object.assign({}, ...SMS_BASIC_PREFIXES.map((p) => basics(p, passenger))),
  },
});

/** Reader of every FMCSA format, by kind. */
export const READERS: Record<FmcsaKind, ReaderSpec> = {
  company_census: {
    keys: { DOT_NUMBER: 'INTEGER' },
    notNull: ['DOT_NUMBER'],
    select: {
      dot_number: '"DOT_NUMBER"',
      legal_name: s('LEGAL_NAME'),
      dba_name: s('DBA_NAME'),
      status_code: s('STATUS_CODE'),
      carrier_operation: s('CARRIER_OPERATION'),
      hm_flag: flag('HM_IND'),
      pc_flag: `(coalesce(TRY_CAST(trim("BUS_UNITS") AS INTEGER), 0) > 0 OR coalesce(upper(trim("CRGO_PASSENGERS")) = 'X', false))`,
      phy_street: s('PHY_STREET'),
      phy_city: s('PHY_CITY'),
      phy_state: s('PHY_STATE'),
      phy_zip: s('PHY_ZIP'),
      phy_country: s('PHY_COUNTRY'),
      mailing_street: s('CARRIER_MAILING_STREET'),
      mailing_city: s('CARRIER_MAILING_CITY'),
      mailing_state: s('CARRIER_MAILING_STATE'),
      mailing_zip: s('CARRIER_MAILING_ZIP'),
      phone: s('PHONE'),
      cell_phone: s('CELL_PHONE'),
      fax: s('FAX'),
      email_address: `lower(${s('EMAIL_ADDRESS')})`,
      mcs150_date: ymd('MCS150_DATE'),
      add_date: ymd('ADD_DATE'),
      mcs150_mileage: big('MCS150_MILEAGE'),
      mcs150_mileage_year: int('MCS150_MILEAGE_YEAR'),
      power_units: int('POWER_UNITS'),
      truck_units: int('TRUCK_UNITS'),
      bus_units: int('BUS_UNITS'),
      total_drivers: int('TOTAL_DRIVERS'),
      total_cdl: int('TOTAL_CDL'),
      docket1: prefixed('DOCKET1PREFIX', 'DOCKET1'),
      docket2: prefixed('DOCKET2PREFIX', 'DOCKET2'),
      docket3: prefixed('DOCKET3PREFIX', 'DOCKET3'),
      prior_revoke_flag: flag('PRIOR_REVOKE_FLAG'),
      prior_revoke_dot_number: int('PRIOR_REVOKE_DOT_NUMBER'),
      company_officer_1: s('COMPANY_OFFICER_1'),
      company_officer_2: s('COMPANY_OFFICER_2'),
      dun_bradstreet_no: s('DUN_BRADSTREET_NO'),
      safety_rating: s('SAFETY_RATING'),
      safety_rating_date: ymd('SAFETY_RATING_DATE'),
      review_type: s('REVIEW_TYPE'),
      review_date: ymd('REVIEW_DATE'),
      census_format: `'company_census'`,
    },
  },
  sms_census: {
    keys: { DOT_NUMBER: 'INTEGER' },
    notNull: ['DOT_NUMBER'],
    select: {
      dot_number: '"DOT_NUMBER"',
      legal_name: s('LEGAL_NAME'),
      dba_name: s('DBA_NAME'),
      status_code: `'A'`,
      carrier_operation: s('CARRIER_OPERATION'),
      hm_flag: flag('HM_FLAG'),
      pc_flag: flag('PC_FLAG'),
      phy_street: s('PHY_STREET'),
      phy_city: s('PHY_CITY'),
      phy_state: s('PHY_STATE'),
      phy_zip: s('PHY_ZIP'),
      phy_country: s('PHY_COUNTRY'),
      mailing_street: s('MAILING_STREET'),
      mailing_city: s('MAILING_CITY'),
      mailing_state: s('MAILING_STATE'),
      mailing_zip: s('MAILING_ZIP'),
      phone: s('TELEPHONE'),
      cell_phone: 'CAST(NULL AS VARCHAR)',
      fax: s('FAX'),
      email_address: `lower(${s('EMAIL_ADDRESS')})`,
      mcs150_date: dmy('MCS150_DATE'),
      add_date: dmy('ADD_DATE'),
      mcs150_mileage: big('MCS150_MILEAGE'),
      mcs150_mileage_year: int('MCS150_MILEAGE_YEAR'),
      power_units: int('NBR_POWER_UNIT'),
      truck_units: 'CAST(NULL AS INTEGER)',
      bus_units: 'CAST(NULL AS INTEGER)',
      total_drivers: int('DRIVER_TOTAL'),
      total_cdl: 'CAST(NULL AS INTEGER)',
      census_format: `'sms_input_census'`,
    },
  },
  crash: {
    keys: { CRASH_ID: 'BIGINT', DOT_NUMBER: 'INTEGER' },
    notNull: ['CRASH_ID'],
    select: {
      crash_id: '"CRASH_ID"',
      report_state: s('REPORT_STATE'),
      report_number: s('REPORT_NUMBER'),
      report_date: ymd('REPORT_DATE'),
      report_seq_no: int('REPORT_SEQ_NO'),
      dot_number: '"DOT_NUMBER"',
      ci_status_code: s('CI_STATUS_CODE'),
      city: s('CITY'),
      state: s('STATE'),
      truck_bus_ind: s('TRUCK_BUS_IND'),
      vin: `upper(${s('VEHICLE_IDENTIFICATION_NUMBER')})`,
      vehicle_license_number: s('VEHICLE_LICENSE_NUMBER'),
      vehicle_lic_state: s('VEHICLE_LIC_STATE'),
      hazmat_released: s('HAZMAT_RELEASED'),
      vehicles_in_accident: int('VEHICLES_IN_ACCIDENT'),
      fatalities: int('FATALITIES'),
      injuries: int('INJURIES'),
      tow_away: flag('TOW_AWAY'),
      federal_recordable: flag('FEDERAL_RECORDABLE'),
      crash_carrier_name: s('CRASH_CARRIER_NAME'),
      crash_carrier_state: s('CRASH_CARRIER_STATE'),
    },
  },
  inspection: {
    keys: { INSPECTION_ID: 'BIGINT', DOT_NUMBER: 'INTEGER' },
    notNull: ['INSPECTION_ID'],
    select: {
      inspection_id: '"INSPECTION_ID"',
      dot_number: '"DOT_NUMBER"',
      report_state: s('REPORT_STATE'),
      report_number: s('REPORT_NUMBER'),
      insp_date: ymd('INSP_DATE'),
      insp_level_id: int('INSP_LEVEL_ID'),
      ci_status_code: s('CI_STATUS_CODE'),
      hazmat_placard_req: flag('HAZMAT_PLACARD_REQ'),
      viol_total: int('VIOL_TOTAL'),
      oos_total: int('OOS_TOTAL'),
      driver_viol_total: int('DRIVER_VIOL_TOTAL'),
      driver_oos_total: int('DRIVER_OOS_TOTAL'),
      vehicle_viol_total: int('VEHICLE_VIOL_TOTAL'),
      vehicle_oos_total: int('VEHICLE_OOS_TOTAL'),
      hazmat_viol_total: int('HAZMAT_VIOL_TOTAL'),
      hazmat_oos_total: int('HAZMAT_OOS_TOTAL'),
      insp_carrier_name: s('INSP_CARRIER_NAME'),
      insp_carrier_state: s('INSP_CARRIER_STATE'),
    },
  },
  inspection_units: {
    keys: { INSPECTION_ID: 'BIGINT' },
    notNull: ['INSPECTION_ID'],
    select: {
      inspection_id: '"INSPECTION_ID"',
      insp_unit_id: big('INSP_UNIT_ID'),
      insp_unit_type_id: int('INSP_UNIT_TYPE_ID'),
      insp_unit_number: int('INSP_UNIT_NUMBER'),
      insp_unit_make: s('INSP_UNIT_MAKE'),
      insp_unit_license: s('INSP_UNIT_LICENSE'),
      insp_unit_license_state: s('INSP_UNIT_LICENSE_STATE'),
      vin: `upper(${s('INSP_UNIT_VEHICLE_ID_NUMBER')})`,
    },
  },
  violations: {
    keys: { INSPECTION_ID: 'BIGINT' },
    notNull: ['INSPECTION_ID'],
    select: {
      inspection_id: '"INSPECTION_ID"',
      insp_violation_id: big('INSP_VIOLATION_ID'),
      seq_no: int('SEQ_NO'),
      part_no: s('PART_NO'),
      part_no_section: s('PART_NO_SECTION'),
      insp_viol_unit: s('INSP_VIOL_UNIT'),
      insp_unit_id: big('INSP_UNIT_ID'),
      insp_violation_category_id: int('INSP_VIOLATION_CATEGORY_ID'),
      // Only `Y` is truthy (schemas.md §3).
      out_of_service: `coalesce(upper(trim("OUT_OF_SERVICE_INDICATOR")) = 'Y', false)`,
      citation_number: s('CITATION_NUMBER'),
    },
  },
  sms_property: sms(false),
  sms_passenger: sms(true),
  revocation: {
    keys: { DOT_NUMBER: 'INTEGER' },
    notNull: ['DOT_NUMBER'],
    select: {
      docket_number: docket('DOCKET_NUMBER'),
      dot_number: '"DOT_NUMBER"',
      authority_type: s('OPERATING_AUTHORITY_REGISTRATION_TYPE'),
      serve_date: mdy('SERVE_DATE'),
      revocation_type: s('REVOCATION_TYPE'),
      effective_date: mdy('EFFECTIVE_DATE'),
      involuntary: `coalesce(upper(trim("REVOCATION_TYPE")) LIKE 'INVOLUNTARY%', false)`,
    },
  },
  authority: {
    keys: { DOT_NUMBER: 'INTEGER' },
    notNull: [],
    select: {
      docket_number: docket('DOCKET_NUMBER'),
      dot_number: '"DOT_NUMBER"',
      common_stat: s('COMMON_STAT'),
      contract_stat: s('CONTRACT_STAT'),
      broker_stat: s('BROKER_STAT'),
      common_app_pend: s('COMMON_APP_PEND'),
      contract_app_pend: s('CONTRACT_APP_PEND'),
      broker_app_pend: s('BROKER_APP_PEND'),
      common_rev_pend: s('COMMON_REV_PEND'),
      contract_rev_pend: s('CONTRACT_REV_PEND'),
      broker_rev_pend: s('BROKER_REV_PEND'),
      property_chk: s('PROPERTY_CHK'),
      passenger_chk: s('PASSENGER_CHK'),
      hhg_chk: s('HHG_CHK'),
      min_cov_amount_k: thousands('MIN_COV_AMOUNT'),
      cargo_req: s('CARGO_REQ'),
      bond_req: s('BOND_REQ'),
      bipd_file_k: thousands('BIPD_FILE'),
      cargo_file: s('CARGO_FILE'),
      bond_file: s('BOND_FILE'),
      legal_name: s('LEGAL_NAME'),
      dba_name: s('DBA_NAME'),
      bus_street_po: s('BUS_STREET_PO'),
      bus_city: s('BUS_CITY'),
      bus_state_code: s('BUS_STATE_CODE'),
      bus_zip_code: s('BUS_ZIP_CODE'),
      bus_telno: s('BUS_TELNO'),
    },
  },
  insurance: {
    keys: {},
    notNull: [],
    select: {
      docket_number: docket('PREFIX_DOCKET_NUMBER'),
      ins_type_code: s('INS_TYPE_CODE'),
      ins_class_code: s('INS_CLASS_CODE'),
      max_cov_amount_k: thousands('MAX_COV_AMOUNT'),
      underl_lim_amount_k: thousands('UNDERL_LIM_AMOUNT'),
      policy_no: s('POLICY_NO'),
      effective_date: mdy('EFFECTIVE_DATE'),
      ins_form_code: s('INS_FORM_CODE'),
      name_company: s('NAME_COMPANY'),
    },
  },
  oos_orders: {
    keys: { DOT_NUMBER: 'INTEGER' },
    notNull: ['DOT_NUMBER'],
    select: {
      dot_number: '"DOT_NUMBER"',
      legal_name: s('LEGAL_NAME'),
      dba_name: s('DBA_NAME'),
      oos_date: iso('OOS_DATE'),
      oos_reason: s('OOS_REASON'),
      status: `upper(${s('STATUS')})`,
      rescind_date: iso('RESCIND_DATE'),
    },
  },
  enforcement: {
    keys: { DOT_NUMBER: 'INTEGER' },
    notNull: ['DOT_NUMBER'],
    select: {
      dot_number: '"DOT_NUMBER"',
      case_number: s('CASE_NUMBER'),
      case_open_date: iso('CASE_OPEN_DATE'),
      case_closed_date: iso('CASE_CLOSED_DATE'),
      enforcement_type: s('ENFORCEMENT_TYPE'),
      violation_desc: s('VIOLATION_DESC'),
      penalty_amount: dbl('PENALTY_AMOUNT'),
      status: s('STATUS'),
    },
  },
};

/** SQL literal of a string for read_csv options (paths, names). */
function lit(v: string): string {
  return `'${v.replace(/'/g, "''")}'`;
}

/**
 * The `SELECT … FROM read_csv(…)` of one file. `columns` are the file's
 * columns in file order (canonical names); `rejectsTable` receives the rows
 * DuckDB could not read (line, column, error).
 */
export function readerSelectSql(kind: FmcsaKind, file: string, columns: string[], rejectsTable: string, sourceName: string): string {
  const spec = READERS[kind];
  const cols = columns.map((c) => `${lit(c)}: ${lit(spec.keys[c] ?? 'VARCHAR')}`).join(', ');
  const sel = Object.entries(spec.select)
    .map(([k, e]) => `${e} AS "${k}"`)
    .join(',\n  ');
  const notNull = spec.notNull.length ? `, force_not_null = [${spec.notNull.map(lit).join(', ')}]` : '';
  return `SELECT ${sel},\n  ${lit(sourceName)} AS source_file
FROM read_csv(${lit(file)}, header = true, auto_detect = false, delim = ',', quote = '"', escape = '"',
  columns = {${cols}}${notNull}, store_rejects = true, rejects_table = ${lit(rejectsTable)}, rejects_scan = ${lit(`${rejectsTable}_scan`)},
  max_line_size = 1048576)`;
}
