-- Several deliveries with their endpoint, for the delivery attempts in flight (one query per batch; the message
-- payloads come from get-message.sql or the in-process cache of messages, which never change).
-- Params: $ids JSON array of delivery ids. Result: the delivery columns, url, secret, endpoint_status,
-- disabled_reason, consecutive_failures (endpoint columns null once the endpoint was removed).
-- DuckDB (the embedded store); get-deliveries.postgres.sql is the PostgreSQL text.
WITH d AS (SELECT * FROM webhook_deliveries WHERE list_contains(from_json($ids, '["VARCHAR"]'), delivery_id))
SELECT d.*, e.url, e.secret, e.status AS endpoint_status, e.disabled_reason, e.consecutive_failures
FROM d
LEFT JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
