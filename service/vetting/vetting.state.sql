-- State statements of the vetting family (credit accounts and vetting records), portable to the embedded
-- DuckDB store and PostgreSQL: positional parameters, shared types. Loaded by name (loadStatements).
-- name: account_by_id
-- $1 account_id → account_id, plan, balance, created_at
SELECT account_id, plan, balance, created_at FROM accounts WHERE account_id = $1
-- name: account_by_key
-- $1 api_key_sha256 → account_id
SELECT account_id FROM accounts WHERE api_key_sha256 = $1
-- name: history_by_dot
-- $1 dot_number, $2 limit → record_json, signature, key_id (newest first)
SELECT record_json, signature, key_id FROM vetting_records WHERE dot_number = $1 ORDER BY vetting_date DESC, vetting_id DESC LIMIT $2
-- name: record_by_id
-- $1 vetting_id → record_json, snapshot_json, signature, key_id
SELECT record_json, snapshot_json, signature, key_id FROM vetting_records WHERE vetting_id = $1
