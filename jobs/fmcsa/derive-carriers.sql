-- One row per carrier. A DOT present in both census formats keeps the Company
-- Census row (it carries status, rating and dockets), then the newest MCS-150.
-- Params: none. Result: the rows of carriers (same columns); the pipeline
-- replaces the parquet-only table with it (DeriveContext.replaceParquetTable).
SELECT * FROM carriers
QUALIFY row_number() OVER (
  PARTITION BY dot_number
  ORDER BY CASE census_format WHEN 'company_census' THEN 0 ELSE 1 END, mcs150_date DESC NULLS LAST, source_file
) = 1
