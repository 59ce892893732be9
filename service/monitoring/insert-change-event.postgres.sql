-- Stores the change events of one detection in one statement (PostgreSQL; insert-change-event.sql is DuckDB's); a
-- replayed detection (same snapshots, same carrier) adds nothing. Params: $rows JSON array of {event_id, dot_number,
-- prev_snapshot_id, next_snapshot_id, kinds_json, changes_json, prev_origin_json, next_origin_json, detected_at}.
INSERT INTO change_events (event_id, dot_number, prev_snapshot_id, next_snapshot_id, kinds_json, changes_json,
  prev_origin_json, next_origin_json, detected_at)
SELECT event_id, dot_number, prev_snapshot_id, next_snapshot_id, kinds_json, changes_json, prev_origin_json, next_origin_json, detected_at
FROM json_populate_recordset(NULL::change_events, $rows::text::json)
ORDER BY dot_number
ON CONFLICT DO NOTHING
