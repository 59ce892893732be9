-- Packed store transcript_facts_company (issue 22): per ticker, every row of service/transcripts/facts-by-ticker.sql
-- (no type or topic filter, no page), same columns and order (origin as JSON), as {ticker, facts}; the route filters
-- by type and topic and pages in memory, which keeps the SQL's order. Keyed by the ticker's text key as
-- packed-company.sql (a shared key: a list ordered by ticker). Columns: k, v (JSON text).
WITH f AS (
  SELECT ticker,
    list(struct_pack(transcript_key := transcript_key, call_date := call_date, fiscal_year := fiscal_year, fiscal_quarter := fiscal_quarter,
      type := type, topic := topic, speaker := speaker, section := section, snippet := snippet, pattern := pattern, origin := origin)
      ORDER BY call_date DESC NULLS LAST, transcript_key, topic, type, origin_leaf_hash) AS facts
  FROM transcript_facts GROUP BY ticker
)
SELECT ('0x' || left(md5(ticker), 7))::INTEGER AS k, to_json(list(struct_pack(ticker := ticker, facts := facts) ORDER BY ticker))::VARCHAR AS v
FROM f GROUP BY k
