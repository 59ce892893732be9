-- Number of facts across companies by topic and type (the `fact_total` of a transcript search page).
-- Params: $type VARCHAR|NULL, $topic VARCHAR|NULL. Columns: n.
SELECT count(*)::INTEGER AS n
FROM transcript_facts
WHERE ($type IS NULL OR type = $type) AND ($topic IS NULL OR topic = $topic)
