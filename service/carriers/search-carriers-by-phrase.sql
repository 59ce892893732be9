-- Carrier search by a phrase through the name index built at publish (jobs/fmcsa/derive-carrier-name-terms.sql):
-- for a name of two or more words of [a-z0-9] with a letter each, joined by separator runs and neither starting nor
-- ending with one (t1 s1 t2 … tk), the same matches, ranks, order, `total` and page as search-carriers-page.sql
-- with $dot and $mc null, without reading carriers. Params: $name (lower-case), $state (VARCHAR|null), $limit,
-- $offset. Columns: dot_number, rank, total (matches). carriers.queries.ts adds the row's columns from the packed
-- stores.
-- A name contains the phrase exactly when it has parts p … p+k-1 (one name, consecutive places) of which the first
-- ends with t1, the inner ones equal t2 … tk-1 and the last starts with tk, each of the first k-1 followed by the
-- phrase's separator (a separator run of the name and one of the phrase are both maximal, so they are equal). The
-- name starts with the phrase (rank 1) when p is its first part and that part is t1; it is the phrase (rank 0) when,
-- besides, part p+k-1 is tk and ends the name (sep '').
-- Cost: the postings of the phrase's word with the fewest (the dictionary's n) give the candidate chains; only the
-- other words' postings in those chains are grouped.
WITH q AS (
  SELECT string_split_regex($name, '[^a-z0-9]+') AS parts, regexp_extract_all($name, '[^a-z0-9]+') AS seps
), word AS (
  SELECT unnest(parts) AS w, generate_subscripts(parts, 1) AS k, len(parts) AS n, seps FROM q
), cand AS (
  -- The dictionary terms each word can be, by its place in the phrase.
  SELECT d.term, d.n AS postings, word.w, word.k, word.n, coalesce(word.seps[word.k], '') AS sep
  FROM carrier_name_dict d JOIN word
    ON CASE WHEN word.k = 1 THEN ends_with(d.term, word.w) WHEN word.k = word.n THEN starts_with(d.term, word.w) ELSE d.term = word.w END
), driver AS (
  SELECT k FROM cand GROUP BY k ORDER BY sum(postings), k LIMIT 1
), starts AS (
  SELECT t.dot_number, t.nm, t.pos - c.k AS p0
  FROM carrier_name_terms t JOIN cand c ON t.term = c.term
  WHERE c.k = (SELECT k FROM driver) AND (c.k = c.n OR t.sep = c.sep) AND ($state IS NULL OR t.phy_state = $state)
), chains AS (
  SELECT t.dot_number, t.nm, t.pos - c.k AS p0, any_value(t.power_units) AS power_units,
    bool_and(c.k > 1 OR t.term = c.w) AS starts_whole,
    bool_and(c.k < c.n OR (t.term = c.w AND t.sep = '')) AS ends_whole
  FROM carrier_name_terms t JOIN cand c ON t.term = c.term
  SEMI JOIN starts s ON s.dot_number = t.dot_number AND s.nm = t.nm AND s.p0 = t.pos - c.k
  WHERE c.k = c.n OR t.sep = c.sep
  GROUP BY t.dot_number, t.nm, t.pos - c.k
  HAVING count(*) = any_value(c.n)
), hits AS (
  SELECT dot_number, any_value(power_units) AS power_units,
    min(CASE WHEN p0 = 0 AND starts_whole AND ends_whole THEN 0 WHEN p0 = 0 AND starts_whole THEN 1 ELSE 2 END) AS rank
  FROM chains
  GROUP BY dot_number
)
SELECT dot_number, rank, count(*) OVER () AS total
FROM hits
ORDER BY rank, power_units DESC NULLS LAST, dot_number
LIMIT $limit OFFSET $offset;
