-- Stores one change event; a replayed detection (same snapshots, same carrier) is a no-op.
-- Params: $event_id, $dot, $prev, $next, $kinds, $changes, $prev_origin, $next_origin, $at.
INSERT INTO change_events (event_id, dot_number, prev_snapshot_id, next_snapshot_id, kinds_json, changes_json,
  prev_origin_json, next_origin_json, detected_at)
VALUES ($event_id, $dot, $prev, $next, $kinds, $changes, $prev_origin, $next_origin, $at)
ON CONFLICT DO NOTHING
