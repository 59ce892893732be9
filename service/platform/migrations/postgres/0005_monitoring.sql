-- Migration 0005: carrier monitoring and webhooks in PostgreSQL (service/monitoring, docs/monitoring.md; the embedded
-- store's tables are in service/platform/state.tables.sql, same columns and meaning). Watchlist rows are deleted when
-- removed; endpoints and deliveries update their status columns; change events, webhook messages and delivery
-- attempts are append-only. Change detection itself stays DuckDB over the warehouse's parquet snapshots: only its
-- results (change_events) and the last compared snapshot id (state_meta) are stored here.
CREATE TABLE IF NOT EXISTS monitoring_settings (
  account_id  VARCHAR PRIMARY KEY,
  auto_watch  BOOLEAN NOT NULL,
  updated_at  VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS watchlist (
  account_id  VARCHAR NOT NULL,
  dot_number  INTEGER NOT NULL,
  added_at    VARCHAR NOT NULL,
  added_by    VARCHAR NOT NULL,
  PRIMARY KEY (account_id, dot_number)
);
CREATE INDEX IF NOT EXISTS watchlist_by_dot ON watchlist (dot_number);
CREATE SEQUENCE IF NOT EXISTS change_event_seq;
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
CREATE INDEX IF NOT EXISTS change_events_by_dot ON change_events (dot_number, seq);
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
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_account ON webhook_endpoints (account_id);
CREATE TABLE IF NOT EXISTS webhook_messages (
  message_id    VARCHAR PRIMARY KEY,
  event_type    VARCHAR NOT NULL,
  payload_json  VARCHAR NOT NULL,
  created_at    VARCHAR NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS webhook_delivery_seq;
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
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_message ON webhook_deliveries (message_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_account ON webhook_deliveries (account_id, seq);
CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (seq) WHERE status = 'pending';
CREATE TABLE IF NOT EXISTS webhook_attempts (
  delivery_id  VARCHAR NOT NULL,
  attempt      INTEGER NOT NULL,
  started_at   VARCHAR NOT NULL,
  status_code  INTEGER,
  latency_ms   INTEGER NOT NULL,
  error        VARCHAR,
  PRIMARY KEY (delivery_id, attempt)
);
