-- Registry domain tables (SEC EDGAR). Rows pass through to JSON responses, so names are snake_case.
-- Nested values (addresses, former names, origin leaves) are JSON text.

-- Every row of every ticker file ingested; is_current marks the latest (undated) files.
CREATE TABLE IF NOT EXISTS ticker_snapshots (
  snapshot_date   DATE,
  is_current      BOOLEAN NOT NULL,
  file_format     VARCHAR NOT NULL,
  cik             INTEGER NOT NULL,
  cik_padded      VARCHAR NOT NULL,
  ticker          VARCHAR NOT NULL,
  name            VARCHAR,
  exchange        VARCHAR,
  rank            INTEGER,
  content_sha256  VARCHAR NOT NULL
);

-- Identity from submissions JSON, one row per CIK.
CREATE TABLE IF NOT EXISTS companies (
  cik                                INTEGER NOT NULL,
  cik_padded                         VARCHAR NOT NULL,
  name                               VARCHAR NOT NULL,
  entity_type                        VARCHAR,
  sic                                VARCHAR,
  sic_description                    VARCHAR,
  owner_org                          VARCHAR,
  category                           VARCHAR,
  fiscal_year_end                    VARCHAR,
  state_of_incorporation             VARCHAR,
  state_of_incorporation_description VARCHAR,
  ein                                VARCHAR,
  lei                                VARCHAR,
  phone                              VARCHAR,
  website                            VARCHAR,
  investor_website                   VARCHAR,
  description                        VARCHAR,
  tickers                            VARCHAR[],
  exchanges                          VARCHAR[],
  business_address                   JSON,
  mailing_address                    JSON,
  former_names                       JSON,
  filing_pages                       VARCHAR[],
  origin_leaf_hash                   VARCHAR NOT NULL,
  origin                             JSON NOT NULL
);

-- The filing index, from filings.recent and the overflow pages.
CREATE TABLE IF NOT EXISTS filings (
  cik                     INTEGER NOT NULL,
  accession               VARCHAR NOT NULL,
  form                    VARCHAR NOT NULL,
  filing_date             DATE NOT NULL,
  report_date             DATE,
  acceptance_datetime     VARCHAR,
  act                     VARCHAR,
  file_number             VARCHAR,
  film_number             VARCHAR,
  items                   VARCHAR[],
  size                    BIGINT,
  is_xbrl                 BOOLEAN,
  is_inline_xbrl          BOOLEAN,
  primary_document        VARCHAR,
  primary_doc_description VARCHAR,
  origin_leaf_hash        VARCHAR NOT NULL
);

-- Derived at publish (see derive.sql): one row per known ticker, the CIK it resolves to now, and the company status.
CREATE TABLE IF NOT EXISTS company_lookup (
  ticker      VARCHAR NOT NULL,
  cik         INTEGER NOT NULL,
  cik_padded  VARCHAR NOT NULL,
  name        VARCHAR,
  exchange    VARCHAR,
  is_primary  BOOLEAN NOT NULL,
  status      VARCHAR NOT NULL,
  status_reason VARCHAR
);

-- Key XBRL metrics per company from companyfacts (one picked fact per metric; see ingest/edgar/companyfacts.ts).
CREATE TABLE IF NOT EXISTS company_facts (
  cik            INTEGER NOT NULL,
  entity_name    VARCHAR,
  metric         VARCHAR NOT NULL,
  taxonomy       VARCHAR NOT NULL,
  concept        VARCHAR NOT NULL,
  unit           VARCHAR NOT NULL,
  value          DOUBLE NOT NULL,
  period_start   DATE,
  period_end     DATE NOT NULL,
  period_kind    VARCHAR NOT NULL,
  accession      VARCHAR NOT NULL,
  form           VARCHAR NOT NULL,
  filed          DATE NOT NULL,
  fy             INTEGER,
  fp             VARCHAR,
  frame          VARCHAR,
  is_amendment   BOOLEAN NOT NULL,
  is_fallback    BOOLEAN NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- Shares outstanding over time (dei:EntityCommonStockSharesOutstanding, or the us-gaap/ifrs fallback): one fact per
-- period end from companyfacts (ingest/edgar/companyfacts.ts share_history), so a quote's market cap uses the count
-- as of its date. The latest row per cik is the company_facts shares_outstanding fact.
CREATE TABLE IF NOT EXISTS company_share_counts (
  cik            INTEGER NOT NULL,
  taxonomy       VARCHAR NOT NULL,
  concept        VARCHAR NOT NULL,
  value          DOUBLE NOT NULL,
  period_end     DATE NOT NULL,
  accession      VARCHAR NOT NULL,
  form           VARCHAR NOT NULL,
  filed          DATE NOT NULL,
  is_amendment   BOOLEAN NOT NULL,
  is_fallback    BOOLEAN NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- Every filing document read (8-K, 10-K, ownership, other) with its extraction status.
CREATE TABLE IF NOT EXISTS documents (
  content_sha256 VARCHAR NOT NULL,
  cik            INTEGER,
  accession      VARCHAR,
  form           VARCHAR,
  document       VARCHAR NOT NULL,
  doc_kind       VARCHAR NOT NULL,
  date_hint      DATE,
  filing_date    DATE,
  acceptance_et  VARCHAR,
  status         VARCHAR NOT NULL,   -- extracted | failed | skipped
  reason         VARCHAR,
  source_url     VARCHAR,
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- 8-K items read from the documents themselves (summaries; pre-2004 items mapped).
CREATE TABLE IF NOT EXISTS doc_events (
  content_sha256 VARCHAR NOT NULL,
  cik            INTEGER,
  accession      VARCHAR,
  form           VARCHAR,
  item           VARCHAR NOT NULL,
  original_item  VARCHAR,
  event_type     VARCHAR NOT NULL,
  title          VARCHAR NOT NULL,
  summary        VARCHAR,
  event_date     DATE,
  filing_date    DATE,
  acceptance_et  VARCHAR,
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- Directors and officers: Forms 3/4/5 reporting owners and 10-K executive-officer tables.
CREATE TABLE IF NOT EXISTS people_roles (
  content_sha256 VARCHAR NOT NULL,
  person_name    VARCHAR NOT NULL,
  person_cik     BIGINT,
  cik            INTEGER,
  issuer_name    VARCHAR,
  issuer_ticker  VARCHAR,
  role_type      VARCHAR NOT NULL,   -- officer | director | ten_percent_owner | other | executive_officer
  role           VARCHAR NOT NULL,
  age            INTEGER,
  as_of          DATE,
  accession      VARCHAR,
  form           VARCHAR,
  source_kind    VARCHAR NOT NULL,   -- ownership | 10-K
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- Profile facts from 10-K Item 1: employees, products, partnerships.
CREATE TABLE IF NOT EXISTS profile_facts (
  content_sha256 VARCHAR NOT NULL,
  cik            INTEGER,
  accession      VARCHAR,
  fact_type      VARCHAR NOT NULL,
  value          VARCHAR NOT NULL,
  numeric_value  DOUBLE,
  evidence       VARCHAR,
  section        VARCHAR,
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- Signal hits from 10-K Items 1A and 7 (ingest/edgar/signals.ts).
CREATE TABLE IF NOT EXISTS signals (
  content_sha256 VARCHAR NOT NULL,
  cik            INTEGER,
  accession      VARCHAR,
  signal_type    VARCHAR NOT NULL,
  pattern_id     VARCHAR NOT NULL,
  strength       INTEGER NOT NULL,
  section        VARCHAR NOT NULL,
  evidence       VARCHAR NOT NULL,
  sentence_count INTEGER NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL,
  origin         JSON NOT NULL
);

-- Rows of EDGAR daily/quarterly form, company and master index files.
CREATE TABLE IF NOT EXISTS index_entries (
  cik            INTEGER NOT NULL,
  company_name   VARCHAR,
  form           VARCHAR NOT NULL,
  date_filed     DATE NOT NULL,
  file_name      VARCHAR NOT NULL,
  accession      VARCHAR,
  index_file     VARCHAR NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL
);

-- Derived at publish (derive-layers.sql) ---------------------------------------------------------

-- Timeline: 8-K items from the filing index and from 8-K documents, one row per (cik, accession, item).
CREATE TABLE IF NOT EXISTS timeline (
  cik            INTEGER NOT NULL,
  accession      VARCHAR NOT NULL,
  form           VARCHAR,
  item           VARCHAR NOT NULL,
  event_type     VARCHAR NOT NULL,
  title          VARCHAR NOT NULL,
  summary        VARCHAR,
  event_date     DATE,
  filing_date    DATE,
  document_url   VARCHAR,
  basis          VARCHAR NOT NULL,   -- document | filing_index
  origin_leaf_hash VARCHAR NOT NULL
);

-- Earnings calendar: confirmed (8-K item 2.02) and predicted dates.
CREATE TABLE IF NOT EXISTS earnings_calendar (
  cik            INTEGER NOT NULL,
  event_date     DATE NOT NULL,
  confirmed      BOOLEAN NOT NULL,
  timing         VARCHAR NOT NULL,   -- BMO | AMC | DMH | unknown
  acceptance_et  VARCHAR,
  timing_basis   VARCHAR,            -- sgml_header | acceptance_utc | acceptance_et_labelled_z | history
  acceptance_check VARCHAR,          -- agrees | disagrees | null when only one source
  accession      VARCHAR,
  confidence     DOUBLE NOT NULL,
  basis          VARCHAR NOT NULL,
  document_url   VARCHAR,
  origin_leaf_hash VARCHAR,
  timing_established VARCHAR         -- sgml_header | acceptance_utc_proven | acceptance_eastern_proven | both_readings_agree | uncertain | unknown | history
);

-- Filing index with EDGAR URLs and extraction status.
CREATE TABLE IF NOT EXISTS filing_index (
  cik               INTEGER NOT NULL,
  accession         VARCHAR NOT NULL,
  form              VARCHAR NOT NULL,
  filing_date       DATE NOT NULL,
  report_date       DATE,
  acceptance_datetime VARCHAR,
  items             VARCHAR[],
  primary_document  VARCHAR,
  document_url      VARCHAR,
  index_url         VARCHAR NOT NULL,
  extraction_status VARCHAR NOT NULL,  -- pending | extracted | failed | skipped
  extraction_reason VARCHAR,
  listed_in         VARCHAR NOT NULL,  -- submissions | index
  origin_leaf_hash  VARCHAR NOT NULL
);

-- People: one row per person, company and role, with the period it was seen.
CREATE TABLE IF NOT EXISTS people (
  person_key     VARCHAR NOT NULL,
  person_name    VARCHAR NOT NULL,
  person_cik     BIGINT,
  cik            INTEGER,
  ticker         VARCHAR,
  company_name   VARCHAR,
  role_type      VARCHAR NOT NULL,
  role           VARCHAR NOT NULL,
  first_seen     DATE,
  last_seen      DATE,
  accession      VARCHAR,
  source_kind    VARCHAR NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL
);

-- Signals with the company's ticker and exchange, for /api/signals filters.
CREATE TABLE IF NOT EXISTS signal_hits (
  ticker         VARCHAR,
  exchange       VARCHAR,
  cik            INTEGER,
  company_name   VARCHAR,
  accession      VARCHAR,
  filing_date    DATE,
  signal_type    VARCHAR NOT NULL,
  pattern_id     VARCHAR NOT NULL,
  strength       INTEGER NOT NULL,
  section        VARCHAR NOT NULL,
  evidence       VARCHAR NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL
);
