-- Adds one carrier to an account's watchlist (already watched: no change). Params: $id, $dot, $at, $by (api | auto_vet | mcp).
INSERT INTO watchlist (account_id, dot_number, added_at, added_by) VALUES ($id, $dot, $at, $by)
ON CONFLICT DO NOTHING
