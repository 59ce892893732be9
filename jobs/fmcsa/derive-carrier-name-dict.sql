-- Carrier name index, dictionary (see derive-carrier-name-terms.sql): every distinct term of carrier_name_terms once,
-- in order, with its number of postings n, written as the parquet-only table carrier_name_dict. The search finds the
-- terms containing its query (or, for a phrase, ending with its first word) here, then their carriers as ranges of
-- carrier_name_terms; the packed hits store picks its frequent terms by n (carrier-name-index.ts).
SELECT term, count(*)::INTEGER AS n FROM carrier_name_terms GROUP BY term ORDER BY term
