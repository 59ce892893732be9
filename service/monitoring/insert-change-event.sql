-- Stores the change events of one detection in one statement; a replayed detection (same snapshots, same carrier)
-- adds nothing. Params: $rows JSON array of {event_id, dot_number, prev_snapshot_id, next_snapshot_id, kinds_json,
-- changes_json, prev_origin_json, next_origin_json, detected_at}.
-- DuckDB (the embedded store); insert-change-event.postgres.sql is the PostgreSQL text.
INSERT INTO change_events (event_id, dot_number, prev_snapshot_id, next_snapshot_id, kinds_json, changes_json,
  prev_origin_json, next_origin_json, detected_at)
SELECT event_id, dot_number, prev_snapshot_id, next_snapshot_id, kinds_json, changes_json, prev_origin_json, next_origin_json, detected_at
FROM (SELECT unnest(from_json($rows, '[{"event_id":"VARCHAR","dot_number":"INTEGER","prev_snapshot_id":"VARCHAR","next_snapshot_id":"VARCHAR","kinds_json":"VARCHAR","changes_json":"VARCHAR","prev_origin_json":"VARCHAR","next_origin_json":"VARCHAR","detected_at":"VARCHAR"}]'), recursive := true))
ORDER BY dot_number
ON CONFLICT DO NOTHING
