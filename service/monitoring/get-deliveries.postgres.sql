-- Several deliveries with their endpoint (PostgreSQL; get-deliveries.sql is DuckDB's and says why one query per batch).
-- Params: $ids JSON array of delivery ids. Result: the delivery columns, url, secret, endpoint_status,
-- disabled_reason, consecutive_failures (endpoint columns null once the endpoint was removed).
SELECT d.*, e.url, e.secret, e.status AS endpoint_status, e.disabled_reason, e.consecutive_failures
FROM webhook_deliveries d
LEFT JOIN webhook_endpoints e ON e.endpoint_id = d.endpoint_id
WHERE d.delivery_id IN (SELECT json_array_elements_text($ids::text::json))
