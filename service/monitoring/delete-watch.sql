-- Removes one carrier from an account's watchlist. Params: $id account id, $dot DOT number.
DELETE FROM watchlist WHERE account_id = $id AND dot_number = $dot
