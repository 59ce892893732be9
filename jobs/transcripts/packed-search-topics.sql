-- Packed store transcript_search_topics (issue 22): per topic, and for every topic at once (key text ''), the rows of
-- service/transcripts/search-topics.sql, same columns and order (calls as JSON), as {key, rows}. Keyed by the text
-- key of the topic (lib/warehouse/packed-store.ts textKey); texts sharing a key share the record (a list ordered by
-- key). Columns: k, v (JSON text).
WITH g AS (
  SELECT topic, ticker,
    list({'transcript_key': transcript_key, 'title': title, 'call_date': call_date, 'fiscal_year': fiscal_year, 'fiscal_quarter': fiscal_quarter, 'mentions': mentions} ORDER BY call_date NULLS LAST, transcript_key) AS calls,
    min(call_date) AS first_mention_date, sum(mentions)::INTEGER AS mentions
  FROM transcript_topics GROUP BY topic, ticker
),
keyed AS (
  SELECT topic AS key, topic, ticker, calls, first_mention_date, mentions FROM g
  UNION ALL
  SELECT '' AS key, topic, ticker, calls, first_mention_date, mentions FROM g
),
lists AS (
  SELECT key, list(struct_pack(topic := topic, ticker := ticker, calls := calls, first_mention_date := first_mention_date, mentions := mentions)
      ORDER BY topic, first_mention_date NULLS LAST, ticker) AS rows
  FROM keyed GROUP BY key
)
SELECT ('0x' || left(md5(key), 7))::INTEGER AS k, to_json(list(struct_pack(key := key, rows := rows) ORDER BY key))::VARCHAR AS v
FROM lists GROUP BY k
