-- Facts across companies by topic and type, one page. Params: $type VARCHAR|NULL, $topic VARCHAR|NULL,
-- $limit INTEGER, $offset INTEGER. The order ends with the fact's own leaf hash, so pages are deterministic
-- (service/platform/pagination.ts).
SELECT ticker, transcript_key, call_date, fiscal_year, fiscal_quarter, type, topic, speaker, snippet, origin
FROM transcript_facts
WHERE ($type IS NULL OR type = $type) AND ($topic IS NULL OR topic = $topic)
ORDER BY call_date DESC NULLS LAST, ticker, transcript_key, origin_leaf_hash
LIMIT $limit OFFSET $offset
