-- Stage 2, fast path (no key occurs twice, checked first): every bar is the only version of its day.
-- Params: none. Reads TEMP TABLE quote_hashed. Creates TEMP TABLE quote_chain_input in fold order (scan order = fold order).
CREATE OR REPLACE TEMP TABLE quote_duplicates AS SELECT * FROM quote_hashed LIMIT 0;
CREATE OR REPLACE TEMP TABLE quote_chain_input AS
SELECT * EXCLUDE (day_index), day_index::INTEGER AS day_index, 1 AS version, true AS is_current, true AS day_start, day_index = 0 AS chain_start
FROM (SELECT *, row_number() OVER (PARTITION BY ticker, adjustment ORDER BY quote_date) - 1 AS day_index FROM quote_hashed)
ORDER BY ticker, adjustment, quote_date;
