-- Which of the given DOTs an account already watches (PostgreSQL; watched-among.sql is DuckDB's).
-- Params: $id account id, $dots JSON array of DOTs. Result: dot_number.
SELECT dot_number FROM watchlist
WHERE account_id = $id AND dot_number IN (SELECT json_array_elements_text($dots::text::json)::integer)
