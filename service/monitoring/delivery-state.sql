-- A delivery's status and attempt count as committed (read under its lock before an attempt is recorded).
-- Params: $id delivery id. Result: status, attempts.
SELECT status, attempts FROM webhook_deliveries WHERE delivery_id = $id
