-- Change events of the carriers on an account's watchlist, oldest first, after a cursor.
-- Params: $id account id, $after seq cursor (exclusive; 0 for the first page), $dot (null: every watched carrier),
-- $limit page size + 1. Result: the change_events columns.
-- Portable (DuckDB and PostgreSQL): a parameter compared with NULL is cast so PostgreSQL knows its type.
SELECT e.* FROM change_events e
WHERE e.seq > $after
  AND e.dot_number IN (SELECT dot_number FROM watchlist WHERE account_id = $id)
  AND (CAST($dot AS INTEGER) IS NULL OR e.dot_number = $dot)
ORDER BY e.seq
LIMIT $limit
