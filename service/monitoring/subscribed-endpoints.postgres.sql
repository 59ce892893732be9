-- The active endpoints subscribed to an event type, of the given accounts (PostgreSQL; subscribed-endpoints.sql is
-- DuckDB's). Params: $type, $accounts (JSON array). Result: endpoint_id, account_id.
SELECT endpoint_id, account_id FROM webhook_endpoints
WHERE status = 'active'
  AND $type::text IN (SELECT json_array_elements_text(event_types_json::json))
  AND account_id IN (SELECT json_array_elements_text($accounts::text::json))
