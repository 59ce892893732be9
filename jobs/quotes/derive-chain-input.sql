-- Stage 2: the ordered fold input. Params: none. Reads quote_versions (dup_rank = 1 only).
-- Creates TEMP TABLE quote_chain_input, one row per distinct version, with
--   seq          0.. in fold order (ticker, adjustment, quote_date, version)
--   version      1.. per key in source order; is_current = last version (continues the chain)
--   chain_start  first version of the first day of ticker+adjustment; day_start = first version of its day
--   source_idx   dense index of (dataset, content_sha256): the leaf template of the source
--   day_index    0.. trading days within the chain
CREATE OR REPLACE TEMP TABLE quote_chain_input AS
WITH v AS (
  SELECT *,
    row_number() OVER (PARTITION BY ticker, adjustment, quote_date ORDER BY source_order, file, line) AS version,
    count(*) OVER (PARTITION BY ticker, adjustment, quote_date) AS n_versions,
    dense_rank() OVER (PARTITION BY ticker, adjustment ORDER BY quote_date) - 1 AS day_index,
    dense_rank() OVER (ORDER BY dataset, content_sha256) - 1 AS source_idx
  FROM quote_versions
  WHERE dup_rank = 1
)
SELECT * EXCLUDE (n_versions),
  (row_number() OVER (ORDER BY ticker, adjustment, quote_date, version) - 1)::INTEGER AS seq,
  version = n_versions AS is_current,
  version = 1 AS day_start,
  version = 1 AND day_index = 0 AS chain_start
FROM v
ORDER BY seq;
