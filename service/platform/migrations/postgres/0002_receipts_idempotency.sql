-- Migration 0002: verification receipts (the prev_nonce chain, readable by every API node; the embedded default keeps
-- DATA_DIR/state/receipts.jsonl) and idempotent POSTs (the first answer to an Idempotency-Key, replayed on retry).
CREATE TABLE IF NOT EXISTS receipts (
  nonce         VARCHAR PRIMARY KEY,
  prev_nonce    VARCHAR,
  receipt_hash  VARCHAR NOT NULL,
  receipt_json  VARCHAR NOT NULL,
  verified_at   VARCHAR NOT NULL
);
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
