-- An account's watchlist with each carrier's last change event (null when none since it was added).
-- Params: $id account id, $after DOT cursor (exclusive, 0 for the first page), $limit page size + 1.
-- Result: dot_number, added_at, added_by, last_event_id, last_kinds_json, last_next_snapshot_id, last_detected_at.
SELECT w.dot_number, w.added_at, w.added_by,
  e.event_id AS last_event_id, e.kinds_json AS last_kinds_json,
  e.next_snapshot_id AS last_next_snapshot_id, e.detected_at AS last_detected_at
FROM watchlist w
LEFT JOIN (
  SELECT * FROM change_events
  QUALIFY row_number() OVER (PARTITION BY dot_number ORDER BY seq DESC) = 1
) e ON e.dot_number = w.dot_number
WHERE w.account_id = $id AND w.dot_number > $after
ORDER BY w.dot_number
LIMIT $limit
