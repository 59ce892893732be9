-- Close matches for an unknown ticker or name, for 404 hints.
-- Params: $q VARCHAR (upper-cased query). Columns: ticker, name, score.
SELECT ticker, name, greatest(jaro_winkler_similarity(ticker, $q), jaro_winkler_similarity(upper(coalesce(name, '')), $q)) AS score
FROM company_lookup
WHERE is_primary AND status = 'active'
ORDER BY score DESC, ticker
LIMIT 3
