-- An endpoint's failure count after an attempt, and its status (disabled with a reason after repeated failures).
-- Params: $id, $failures, $status, $reason, $at.
UPDATE webhook_endpoints SET consecutive_failures = $failures, status = $status, disabled_reason = $reason, updated_at = $at
WHERE endpoint_id = $id
