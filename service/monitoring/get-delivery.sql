-- One delivery with its message and endpoint (endpoint columns null once the endpoint was removed). Params: $id.
SELECT d.*, m.event_type, m.payload_json, e.url, e.secret, e.status AS endpoint_status, e.disabled_reason, e.consecutive_failures
FROM webhook_deliveries d
JOIN webhook_messages m ON m.message_id = d.message_id
LEFT JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
WHERE d.delivery_id = $id
