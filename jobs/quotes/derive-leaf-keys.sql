-- One slice of quote_leaf_keys (sorted by leaf_key) from quote_bars: the derive runs it for consecutive key ranges in
-- ascending order, so the table ends up globally sorted while each sort stays small enough to run in memory
-- (one 20M-row sort spills under the 1 GB publish budget).
-- Params: $lo BIGINT (inclusive), $hi BIGINT (exclusive). Reads quote_bars. Appends to quote_leaf_keys.
INSERT INTO quote_leaf_keys
SELECT leaf_key, ticker, adjustment, quote_date FROM quote_bars
WHERE leaf_key >= $lo AND leaf_key < $hi
ORDER BY leaf_key
