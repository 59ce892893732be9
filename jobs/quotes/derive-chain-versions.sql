-- Stage 2, general path (some key has several rows): duplicates and versions.
-- Params: none. Reads TEMP TABLE quote_hashed. Creates TEMP TABLE quote_duplicates (same key and record already read
-- from an earlier source or line) and TEMP TABLE quote_chain_input (distinct versions, in fold order (scan order = fold order)..
CREATE OR REPLACE TEMP TABLE quote_ranked AS
SELECT *, row_number() OVER (PARTITION BY ticker, adjustment, quote_date, record_sha256 ORDER BY source_order, file, line) AS dup_rank
FROM quote_hashed;
CREATE OR REPLACE TEMP TABLE quote_duplicates AS SELECT * EXCLUDE (dup_rank) FROM quote_ranked WHERE dup_rank > 1;
CREATE OR REPLACE TEMP TABLE quote_chain_input AS
WITH v AS (
  SELECT * EXCLUDE (dup_rank),
    row_number() OVER (PARTITION BY ticker, adjustment, quote_date ORDER BY source_order, file, line) AS version,
    count(*) OVER (PARTITION BY ticker, adjustment, quote_date) AS n_versions,
    (dense_rank() OVER (PARTITION BY ticker, adjustment ORDER BY quote_date) - 1)::INTEGER AS day_index
  FROM quote_ranked
  WHERE dup_rank = 1
)
SELECT * EXCLUDE (n_versions), version = n_versions AS is_current, version = 1 AS day_start, version = 1 AND day_index = 0 AS chain_start
FROM v
ORDER BY ticker, adjustment, quote_date, version;
DROP TABLE quote_ranked;
