-- The accounts watching any of the given carriers. Params: $dots JSON array of DOTs. Result: account_id, dot_number.
SELECT account_id, dot_number FROM watchlist WHERE list_contains(from_json($dots, '["INTEGER"]'), dot_number)
