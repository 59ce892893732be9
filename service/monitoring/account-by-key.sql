-- The credit account bound to an API key. Params: $h SHA-256 (hex) of the key. Result: account_id.
SELECT account_id FROM accounts WHERE api_key_sha256 = $h
