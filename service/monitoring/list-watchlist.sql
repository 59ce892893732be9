-- An account's watchlist with each carrier's last change event (null when none since it was added). Portable
-- (DuckDB and PostgreSQL): the last event is the one with the carrier's highest seq.
-- Params: $id account id, $after DOT cursor (exclusive, 0 for the first page), $limit page size + 1.
-- Result: dot_number, added_at, added_by, last_event_id, last_kinds_json, last_next_snapshot_id, last_detected_at.
SELECT w.dot_number, w.added_at, w.added_by,
  e.event_id AS last_event_id, e.kinds_json AS last_kinds_json,
  e.next_snapshot_id AS last_next_snapshot_id, e.detected_at AS last_detected_at
FROM watchlist w
LEFT JOIN change_events e
  ON e.dot_number = w.dot_number AND e.seq = (SELECT max(c.seq) FROM change_events c WHERE c.dot_number = w.dot_number)
WHERE w.account_id = $id AND w.dot_number > $after
ORDER BY w.dot_number
LIMIT $limit
