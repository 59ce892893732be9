-- The accounts watching any of the given carriers. Params: $dots JSON array of DOTs. Result: account_id, dot_number.
-- DuckDB (the embedded store); watchers-of.postgres.sql is the PostgreSQL text.
SELECT account_id, dot_number FROM watchlist WHERE list_contains(from_json($dots, '["INTEGER"]'), dot_number)
