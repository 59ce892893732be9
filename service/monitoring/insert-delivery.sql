-- Queues one delivery of a message to one endpoint (pending, no attempt yet); a delivery that exists is kept.
-- Params: $delivery_id, $message_id, $endpoint_id, $account_id, $created_at.
INSERT INTO webhook_deliveries (delivery_id, message_id, endpoint_id, account_id, status, attempts, last_error, created_at, updated_at)
VALUES ($delivery_id, $message_id, $endpoint_id, $account_id, 'pending', 0, NULL, $created_at, $created_at)
ON CONFLICT DO NOTHING
