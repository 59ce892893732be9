-- The server-owned durable state (DATA_DIR/state/proofline-state.duckdb): vetting records, credit accounts,
-- proof-of-care documents and their custody events. One writer (the API process); warehouse snapshots stay read-only.
-- Rows here are never updated except accounts.balance / care_documents head columns; custody events are append-only
-- (the service has no UPDATE or DELETE path for them) and chained by hash, so edits made around the service are detected.
-- Monitoring (service/monitoring, docs/monitoring.md): watchlist rows are deleted when removed; webhook endpoints and
-- deliveries update their status columns; change events, webhook messages and delivery attempts are append-only.
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

-- Per-account monitoring settings: auto_watch adds each carrier the account vets (POST /api/vet) to its watchlist.
CREATE TABLE IF NOT EXISTS monitoring_settings (
  account_id  VARCHAR PRIMARY KEY,
  auto_watch  BOOLEAN NOT NULL,
  updated_at  VARCHAR NOT NULL
);
-- The carriers an account watches (size bounded by its plan: service/monitoring/watchlist.queries.ts).
CREATE TABLE IF NOT EXISTS watchlist (
  account_id  VARCHAR NOT NULL,
  dot_number  INTEGER NOT NULL,
  added_at    VARCHAR NOT NULL,
  added_by    VARCHAR NOT NULL,
  PRIMARY KEY (account_id, dot_number)
);
CREATE INDEX IF NOT EXISTS watchlist_by_dot ON watchlist (dot_number);
CREATE SEQUENCE IF NOT EXISTS change_event_seq;
-- One row per watched carrier whose snapshot row changed between two published FMCSA snapshots.
CREATE TABLE IF NOT EXISTS change_events (
  event_id          VARCHAR PRIMARY KEY,
  seq               BIGINT NOT NULL DEFAULT nextval('change_event_seq'),
  dot_number        INTEGER NOT NULL,
  prev_snapshot_id  VARCHAR NOT NULL,
  next_snapshot_id  VARCHAR NOT NULL,
  kinds_json        VARCHAR NOT NULL,
  changes_json      VARCHAR NOT NULL,
  prev_origin_json  VARCHAR NOT NULL,
  next_origin_json  VARCHAR NOT NULL,
  detected_at       VARCHAR NOT NULL
);
CREATE INDEX IF NOT EXISTS change_events_by_dot ON change_events (dot_number);
-- Webhook endpoints of an account (Standard Webhooks; secret whsec_...); disabled after repeated failures.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  endpoint_id           VARCHAR PRIMARY KEY,
  account_id            VARCHAR NOT NULL,
  url                   VARCHAR NOT NULL,
  secret                VARCHAR NOT NULL,
  event_types_json      VARCHAR NOT NULL,
  status                VARCHAR NOT NULL,
  disabled_reason       VARCHAR,
  consecutive_failures  INTEGER NOT NULL,
  created_at            VARCHAR NOT NULL,
  updated_at            VARCHAR NOT NULL
);
-- One message per event (its id is the webhook-id header, the same on every attempt and redelivery).
CREATE TABLE IF NOT EXISTS webhook_messages (
  message_id    VARCHAR PRIMARY KEY,
  event_type    VARCHAR NOT NULL,
  payload_json  VARCHAR NOT NULL,
  created_at    VARCHAR NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS webhook_delivery_seq;
-- One delivery per (message, endpoint); status pending | delivered | failed.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  delivery_id   VARCHAR PRIMARY KEY,
  seq           BIGINT NOT NULL DEFAULT nextval('webhook_delivery_seq'),
  message_id    VARCHAR NOT NULL,
  endpoint_id   VARCHAR NOT NULL,
  account_id    VARCHAR NOT NULL,
  status        VARCHAR NOT NULL,
  attempts      INTEGER NOT NULL,
  last_error    VARCHAR,
  created_at    VARCHAR NOT NULL,
  updated_at    VARCHAR NOT NULL
);
-- Every delivery attempt: HTTP status (null when none came back), latency and error.
CREATE TABLE IF NOT EXISTS webhook_attempts (
  delivery_id  VARCHAR NOT NULL,
  attempt      INTEGER NOT NULL,
  started_at   VARCHAR NOT NULL,
  status_code  INTEGER,
  latency_ms   INTEGER NOT NULL,
  error        VARCHAR,
  PRIMARY KEY (delivery_id, attempt)
);
