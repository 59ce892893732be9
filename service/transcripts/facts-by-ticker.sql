-- Facts of one ticker, optionally by type and topic, one page. Params: $ticker VARCHAR, $type VARCHAR|NULL,
-- $topic VARCHAR|NULL, $limit INTEGER, $offset INTEGER. The order ends with the fact's own leaf hash, so pages are
-- deterministic (service/platform/pagination.ts).
SELECT transcript_key, call_date, fiscal_year, fiscal_quarter, type, topic, speaker, section, snippet, pattern, origin
FROM transcript_facts
WHERE ticker = $ticker AND ($type IS NULL OR type = $type) AND ($topic IS NULL OR topic = $topic)
ORDER BY call_date DESC NULLS LAST, transcript_key, topic, type, origin_leaf_hash
LIMIT $limit OFFSET $offset
