-- Enables or disables an endpoint (with the reason) of an account. Params: $id, $account, $status, $reason, $at.
UPDATE webhook_endpoints SET status = $status, disabled_reason = $reason, consecutive_failures = 0, updated_at = $at
WHERE endpoint_id = $id AND account_id = $account
