-- State statements of the vetting family (credit accounts and vetting records), portable to the embedded
-- DuckDB store and PostgreSQL: positional parameters, shared types. Loaded by name (loadStatements).
-- name: account_by_id
-- $1 account_id → account_id, plan, balance, created_at
SELECT account_id, plan, balance, created_at FROM accounts WHERE account_id = $1
-- name: account_by_key
-- $1 api_key_sha256 → account_id
SELECT account_id FROM accounts WHERE api_key_sha256 = $1
-- name: history_by_dot
-- $1 dot_number, $2 limit, $3/$4 the cursor's (vetting_date, vetting_id) or NULL → record_json, signature, key_id,
-- vetting_date, vetting_id (newest first; keyset pages, so records vetted meanwhile never shift a page)
SELECT record_json, signature, key_id, vetting_date, vetting_id FROM vetting_records
WHERE dot_number = $1 AND ($3::VARCHAR IS NULL OR vetting_date < $3::VARCHAR OR (vetting_date = $3::VARCHAR AND vetting_id < $4::VARCHAR))
ORDER BY vetting_date DESC, vetting_id DESC LIMIT $2
-- name: record_by_id
-- $1 vetting_id → record_json, snapshot_json, signature, key_id
SELECT record_json, snapshot_json, signature, key_id FROM vetting_records WHERE vetting_id = $1
