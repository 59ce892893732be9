-- An account's webhook endpoints, oldest first (the secret is not returned). Params: $account.
SELECT endpoint_id, account_id, url, event_types_json, status, disabled_reason, consecutive_failures, created_at, updated_at
FROM webhook_endpoints WHERE account_id = $account ORDER BY created_at, endpoint_id
