-- An account's deliveries, newest first, after a cursor. Params: $account, $before seq cursor (exclusive; null for the
-- first page), $endpoint (null: all), $status (null: all), $limit page size + 1.
-- Portable (DuckDB and PostgreSQL): a parameter compared with NULL is cast so PostgreSQL knows its type.
SELECT d.delivery_id, d.seq, d.message_id, d.endpoint_id, d.status, d.attempts, d.last_error, d.created_at, d.updated_at, m.event_type
FROM webhook_deliveries d JOIN webhook_messages m ON m.message_id = d.message_id
WHERE d.account_id = $account
  AND (CAST($before AS BIGINT) IS NULL OR d.seq < $before)
  AND (CAST($endpoint AS VARCHAR) IS NULL OR d.endpoint_id = $endpoint)
  AND (CAST($status AS VARCHAR) IS NULL OR d.status = $status)
ORDER BY d.seq DESC
LIMIT $limit
