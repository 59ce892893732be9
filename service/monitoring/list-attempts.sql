-- Every attempt of one delivery, in order. Params: $id. Result: attempt, started_at, status_code, latency_ms, error.
SELECT attempt, started_at, status_code, latency_ms, error FROM webhook_attempts WHERE delivery_id = $id ORDER BY attempt
