-- Which of the given DOTs an account already watches. Params: $id account id, $dots JSON array of DOTs. Result: dot_number.
-- DuckDB (the embedded store); watched-among.postgres.sql is the PostgreSQL text.
SELECT dot_number FROM watchlist WHERE account_id = $id AND list_contains(from_json($dots, '["INTEGER"]'), dot_number)
