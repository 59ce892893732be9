-- Which of the given DOTs an account already watches. Params: $id account id, $dots JSON array of DOTs. Result: dot_number.
SELECT dot_number FROM watchlist WHERE account_id = $id AND list_contains(from_json($dots, '["INTEGER"]'), dot_number)
