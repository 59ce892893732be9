-- The active endpoints subscribed to an event type, of the given accounts. Params: $type, $accounts (JSON array).
-- Result: endpoint_id, account_id.
-- DuckDB (the embedded store); subscribed-endpoints.postgres.sql is the PostgreSQL text.
SELECT endpoint_id, account_id FROM webhook_endpoints
WHERE status = 'active'
  AND list_contains(from_json(event_types_json, '["VARCHAR"]'), $type)
  AND list_contains(from_json($accounts, '["VARCHAR"]'), account_id)
