-- Carrier name index, dictionary (see derive-carrier-name-terms.sql): every distinct term of carrier_name_terms once,
-- in order, written as the parquet-only table carrier_name_dict. The search finds the terms containing its query
-- here, then their carriers as ranges of carrier_name_terms.
SELECT DISTINCT term FROM carrier_name_terms ORDER BY term
