-- Migration 0004: the query log behind /api/ir/rankings and /api/stats (one row per metered /api request; the
-- embedded default keeps DATA_DIR/state/query-log.duckdb). Every API node appends its rows here, so rankings and
-- stats on any node count every node's requests. Telemetry, never acknowledged data: service/platform/query-log.ts.
-- Clients are `key:<key_id>` or `ip:<first 16 hex of SHA-256(ip)>`, never raw IPs.
CREATE TABLE IF NOT EXISTS query_log (
  ts_ms        BIGINT NOT NULL,
  client       VARCHAR NOT NULL,
  tier         VARCHAR NOT NULL,
  agent_type   VARCHAR NOT NULL,
  method       VARCHAR NOT NULL,
  path         VARCHAR NOT NULL,
  ticker       VARCHAR,
  status       INTEGER NOT NULL,
  duration_ms  DOUBLE PRECISION NOT NULL
);
-- Rankings and stats read a recent window (ts_ms >= now - days).
CREATE INDEX IF NOT EXISTS query_log_by_ts ON query_log (ts_ms);
