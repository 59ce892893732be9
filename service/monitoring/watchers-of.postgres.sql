-- The accounts watching any of the given carriers (PostgreSQL; watchers-of.sql is DuckDB's).
-- Params: $dots JSON array of DOTs. Result: account_id, dot_number.
SELECT account_id, dot_number FROM watchlist WHERE dot_number IN (SELECT json_array_elements_text($dots::text::json)::integer)
