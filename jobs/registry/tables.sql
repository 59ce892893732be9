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
