-- Receipt statements for the PostgreSQL state store (migration 0002 creates `receipts`): the prev_nonce chain is
-- readable by every API node. Positional parameters. Loaded by name (loadStatements).
-- name: receipt_hash
-- $1 nonce → receipt_hash (SHA-256 of the canonical JSON of the whole receipt)
SELECT receipt_hash FROM receipts WHERE nonce = $1
