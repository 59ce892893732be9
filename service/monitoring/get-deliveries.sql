-- Several deliveries with their message and endpoint, for the delivery attempts in flight (one query per batch).
-- Params: $ids JSON array of delivery ids. Result: as get-delivery.sql.
WITH d AS (SELECT * FROM webhook_deliveries WHERE list_contains(from_json($ids, '["VARCHAR"]'), delivery_id))
SELECT d.*, m.event_type, m.payload_json, e.url, e.secret, e.status AS endpoint_status, e.disabled_reason, e.consecutive_failures
FROM d
JOIN webhook_messages m ON m.message_id = d.message_id
LEFT JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
