-- Lookup keys of the common tables in the serving database.
CREATE INDEX IF NOT EXISTS origin_leaves_hash_idx ON origin_leaves (leaf_hash);
