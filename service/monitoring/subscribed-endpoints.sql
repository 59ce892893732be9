-- The active endpoints subscribed to an event type, of the given accounts. Params: $type, $accounts (JSON array).
-- Result: endpoint_id, account_id.
SELECT endpoint_id, account_id FROM webhook_endpoints
WHERE status = 'active'
  AND list_contains(from_json(event_types_json, '["VARCHAR"]'), $type)
  AND list_contains(from_json($accounts, '["VARCHAR"]'), account_id)
