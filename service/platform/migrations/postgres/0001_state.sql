-- Migration 0001: the durable state tables on PostgreSQL (the embedded store's are service/platform/state.tables.sql).
-- Same columns and meaning: vetting records (with snapshot_json), credit accounts and their ledger, proof-of-care
-- documents and their custody events. Custody events are append-only (the service has no UPDATE or DELETE path
-- for them) and chained by hash; accounts.balance and the care_documents head columns are the only updated values.
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
CREATE INDEX IF NOT EXISTS accounts_by_key ON accounts (api_key_sha256);
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
  risk_score       DOUBLE PRECISION,
  risk_level       VARCHAR,
  recommendation   VARCHAR,
  data_hash        VARCHAR NOT NULL,
  record_json      VARCHAR NOT NULL,
  snapshot_json    VARCHAR NOT NULL,
  signature        VARCHAR NOT NULL,
  key_id           VARCHAR NOT NULL
);
CREATE INDEX IF NOT EXISTS vetting_records_by_dot ON vetting_records (dot_number);
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
-- (document_id, seq) is the primary key: even a writer that skipped the document lock could not fork the chain.
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
