-- Registers a webhook endpoint. Params: $id, $account, $url, $secret, $types (JSON array), $at.
INSERT INTO webhook_endpoints (endpoint_id, account_id, url, secret, event_types_json, status, disabled_reason,
  consecutive_failures, created_at, updated_at)
VALUES ($id, $account, $url, $secret, $types, 'active', NULL, 0, $at, $at)
