-- Creates one delivery of a message to an endpoint; an existing one (same message, same endpoint) is left as is.
-- Params: $id, $message, $endpoint, $account, $at. Result: delivery_id when created.
INSERT INTO webhook_deliveries (delivery_id, message_id, endpoint_id, account_id, status, attempts, last_error, created_at, updated_at)
VALUES ($id, $message, $endpoint, $account, 'pending', 0, NULL, $at, $at)
ON CONFLICT DO NOTHING
RETURNING delivery_id
