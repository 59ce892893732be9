-- Logs one delivery attempt. Params: $id delivery, $attempt, $at, $status (HTTP status or null), $ms, $error.
INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
VALUES ($id, $attempt, $at, $status, $ms, $error)
