-- Idempotency-Key statements (service/platform/idempotency.ts), portable to both state backends: positional
-- parameters. A row with status NULL is a claim in flight; with a status, the first answer to replay.
-- name: claim_row
-- $1 scope, $2 key → request_sha256, status, content_type, body, created_at
SELECT request_sha256, status, content_type, body, created_at FROM idempotency_keys WHERE scope = $1 AND key = $2
-- name: release
-- $1 scope, $2 key: forget a claim (its request failed with a 5xx, or its node died)
DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2
-- name: save
-- $1 scope, $2 key, $3 status, $4 content_type, $5 body: the answer to replay
UPDATE idempotency_keys SET status = $3, content_type = $4, body = $5 WHERE scope = $1 AND key = $2
-- name: retake
-- $1 scope, $2 key, $3 created_at: take over a stale claim (same request body)
UPDATE idempotency_keys SET created_at = $3 WHERE scope = $1 AND key = $2 AND status IS NULL
