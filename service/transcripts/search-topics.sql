-- Per topic: which companies mention it and in which calls (mention counts per call). Params: $topic VARCHAR|NULL.
-- Columns: topic, ticker, calls (JSON list of {transcript_key, title, call_date, fiscal_year, fiscal_quarter, mentions}),
--          first_mention_date, mentions.
SELECT topic, ticker,
  to_json(list({'transcript_key': transcript_key, 'title': title, 'call_date': call_date, 'fiscal_year': fiscal_year, 'fiscal_quarter': fiscal_quarter, 'mentions': mentions} ORDER BY call_date NULLS LAST, transcript_key)) AS calls,
  min(call_date) AS first_mention_date, sum(mentions)::INTEGER AS mentions
FROM transcript_topics
WHERE ($topic IS NULL OR topic = $topic)
GROUP BY topic, ticker
ORDER BY topic, first_mention_date NULLS LAST, ticker
