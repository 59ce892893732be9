-- Companies whose name, summary or tags (ticker, name, SIC description, exchange, category, state, status) contain every query token.
-- Params: $q VARCHAR (whole query, lower-cased), $t0..$t4 VARCHAR (tokens, lower-cased; unused ones NULL), $limit INTEGER.
-- Columns: ticker, cik, name, exchange, status, sic_description, score (higher first).
-- Ties break on the current SEC ticker file's order (company_tickers.json lists by market value), then name.
WITH c AS (
  SELECT l.ticker, l.cik, coalesce(c.name, l.name) AS name, l.exchange, l.status, c.sic_description, r.rank,
         lower(coalesce(c.name, l.name, '')) AS lname,
         lower(concat_ws(' ', l.ticker, coalesce(c.name, l.name), c.sic_description, l.exchange, c.category,
                         c.state_of_incorporation_description, l.status)) AS hay
  FROM company_lookup l
  LEFT JOIN companies c ON c.cik = l.cik
  LEFT JOIN (SELECT cik, min(rank) AS rank FROM ticker_snapshots WHERE is_current AND rank IS NOT NULL GROUP BY cik) r ON r.cik = l.cik
  WHERE l.is_primary
)
SELECT ticker, cik, name, exchange, status, sic_description,
       (CASE WHEN lower(ticker) = $q THEN 100
             WHEN lname = $q THEN 95
             WHEN starts_with(lname, $q) THEN 80
             WHEN contains(lname, $q) THEN 60
             WHEN contains(lname, $t0) THEN 40
             ELSE 20 END) + (CASE WHEN status = 'active' THEN 5 ELSE 0 END) AS score
FROM c
WHERE contains(hay, $t0)
  AND ($t1 IS NULL OR contains(hay, $t1))
  AND ($t2 IS NULL OR contains(hay, $t2))
  AND ($t3 IS NULL OR contains(hay, $t3))
  AND ($t4 IS NULL OR contains(hay, $t4))
ORDER BY score DESC, rank NULLS LAST, name, ticker
LIMIT $limit
