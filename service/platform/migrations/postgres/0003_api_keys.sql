-- Migration 0003: Pro-tier API keys in the database (the embedded default keeps DATA_DIR/state/api-keys.json), so
-- every API node on every machine accepts the same keys. Only the SHA-256 of a secret is stored (lib/api-keys.ts).
CREATE TABLE IF NOT EXISTS api_keys (
  key_id        VARCHAR PRIMARY KEY,
  key_sha256    VARCHAR NOT NULL UNIQUE,
  label         VARCHAR NOT NULL,
  tier          VARCHAR NOT NULL,
  hourly_limit  INTEGER,
  created_at    VARCHAR NOT NULL,
  revoked_at    VARCHAR
);
