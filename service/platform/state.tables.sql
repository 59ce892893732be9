-- The server-owned durable state (DATA_DIR/state/proofline-state.duckdb): vetting records, credit accounts,
-- proof-of-care documents and their custody events. One writer (the API process); warehouse snapshots stay read-only.
-- Rows here are never updated except accounts.balance / care_documents head columns; custody events are append-only
-- (the service has no UPDATE or DELETE path for them) and chained by hash, so edits made around the service are detected.
CREATE TABLE IF NOT EXISTS state_meta (
  key    VARCHAR PRIMARY KEY,
  value  VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS accounts (
  account_id      VARCHAR PRIMARY KEY,
  plan            VARCHAR NOT NULL,
  balance         BIGINT NOT NULL,
  api_key_sha256  VARCHAR,
  created_at      VARCHAR NOT NULL,
  updated_at      VARCHAR NOT NULL
);
-- Credits added (signup, grants, plan changes). Debits are the vetting records themselves (credits_charged).
CREATE TABLE IF NOT EXISTS credit_ledger (
  entry_id       VARCHAR PRIMARY KEY,
  account_id     VARCHAR NOT NULL,
  delta          BIGINT NOT NULL,
  balance_after  BIGINT NOT NULL,
  reason         VARCHAR NOT NULL,
  created_at     VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS vetting_records (
  vetting_id       VARCHAR PRIMARY KEY,
  dot_number       BIGINT NOT NULL,
  broker_id        VARCHAR NOT NULL,
  account_id       VARCHAR NOT NULL,
  credits_charged  INTEGER NOT NULL,
  vetting_date     VARCHAR NOT NULL,
  risk_score       DOUBLE,
  risk_level       VARCHAR,
  recommendation   VARCHAR,
  data_hash        VARCHAR NOT NULL,
  record_json      VARCHAR NOT NULL,
  snapshot_json    VARCHAR NOT NULL,
  signature        VARCHAR NOT NULL,
  key_id           VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS care_documents (
  document_id        VARCHAR PRIMARY KEY,
  created_at         VARCHAR NOT NULL,
  shipment_json      VARCHAR NOT NULL,
  parties_json       VARCHAR NOT NULL,
  vetting_id         VARCHAR,
  vetting_data_hash  VARCHAR,
  creation_hash      VARCHAR NOT NULL,
  event_count        INTEGER NOT NULL,
  head_hash          VARCHAR NOT NULL,
  last_stage         VARCHAR
);
CREATE TABLE IF NOT EXISTS care_events (
  document_id    VARCHAR NOT NULL,
  seq            INTEGER NOT NULL,
  stage          VARCHAR NOT NULL,
  actor_json     VARCHAR NOT NULL,
  evidence_json  VARCHAR NOT NULL,
  occurred_at    VARCHAR,
  recorded_at    VARCHAR NOT NULL,
  prev_hash      VARCHAR NOT NULL,
  hash           VARCHAR NOT NULL,
  PRIMARY KEY (document_id, seq)
);
CREATE INDEX IF NOT EXISTS vetting_records_by_dot ON vetting_records (dot_number);
-- Idempotent POSTs: the first answer to an Idempotency-Key (service/platform/idempotency.ts). status NULL = in flight.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  scope          VARCHAR NOT NULL,
  key            VARCHAR NOT NULL,
  request_sha256 VARCHAR NOT NULL,
  status         INTEGER,
  content_type   VARCHAR,
  body           VARCHAR,
  created_at     VARCHAR NOT NULL,
  PRIMARY KEY (scope, key)
);
