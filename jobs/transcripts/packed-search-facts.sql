-- Packed store transcript_search_facts (issue 22): the rows of service/transcripts/search-facts.sql for each filter
-- (topic or every topic, type or every type), same columns and order (origin as JSON), in blocks of 500 rows (the
-- largest page), so that a page reads at most two records. A block's key text is `<topic>|<type>|<block>` ('' for
-- no filter), its value {key, total, rows}: `total` is search-facts-count.sql's count for the filter. A filter with
-- no block 0 matches nothing (total 0). Keyed by the text key (lib/warehouse/packed-store.ts
-- textKey); texts sharing a key share the record (a list ordered by key). Columns: k, v (JSON text).
WITH types AS (SELECT DISTINCT type FROM transcript_facts UNION ALL SELECT NULL),
topics AS (SELECT DISTINCT topic FROM transcript_facts UNION ALL SELECT NULL),
filters AS (SELECT topics.topic AS f_topic, types.type AS f_type FROM topics CROSS JOIN types),
matched AS (
  SELECT coalesce(x.f_topic, '') || '|' || coalesce(x.f_type, '') AS filter, f.*,
    row_number() OVER (PARTITION BY x.f_topic, x.f_type ORDER BY f.call_date DESC NULLS LAST, f.ticker, f.transcript_key, f.origin_leaf_hash) - 1 AS pos,
    count(*) OVER (PARTITION BY x.f_topic, x.f_type) AS total
  FROM filters x JOIN transcript_facts f ON (x.f_topic IS NULL OR f.topic = x.f_topic) AND (x.f_type IS NULL OR f.type = x.f_type)
),
blocks AS (
  SELECT filter || '|' || (pos // 500)::VARCHAR AS key, any_value(total)::INTEGER AS total,
    list(struct_pack(ticker := ticker, transcript_key := transcript_key, call_date := call_date, fiscal_year := fiscal_year,
      fiscal_quarter := fiscal_quarter, type := type, topic := topic, speaker := speaker, snippet := snippet, origin := origin) ORDER BY pos) AS rows
  FROM matched GROUP BY filter, pos // 500
)
SELECT ('0x' || left(md5(key), 7))::INTEGER AS k, to_json(list(struct_pack(key := key, total := total, rows := rows) ORDER BY key))::VARCHAR AS v
FROM blocks GROUP BY k
