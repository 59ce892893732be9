-- API key statements for the PostgreSQL state store (migration 0003 creates `api_keys`): positional parameters.
-- Loaded by name (loadStatements).
-- name: list
-- → every key record (hashes only), oldest first
SELECT key_id, key_sha256, label, tier, hourly_limit, created_at, revoked_at FROM api_keys ORDER BY created_at, key_id
-- name: revoke
-- $1 key_id, $2 revoked_at → key_id when an active key was revoked
UPDATE api_keys SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL RETURNING key_id
