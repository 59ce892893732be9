-- Number of facts of one ticker, optionally by type and topic (the `total` of a facts page).
-- Params: $ticker VARCHAR, $type VARCHAR|NULL, $topic VARCHAR|NULL. Columns: n.
SELECT count(*)::INTEGER AS n
FROM transcript_facts
WHERE ticker = $ticker AND ($type IS NULL OR type = $type) AND ($topic IS NULL OR topic = $topic)
