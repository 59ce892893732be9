-- Packed store transcripts_company (issue 22): per ticker, the rows of service/transcripts/transcripts-by-ticker.sql
-- and call-dates.sql, same columns and order (JSON columns as JSON), as {ticker, transcripts, call_dates}. Keyed by
-- the ticker's text key (lib/warehouse/packed-store.ts textKey: first 28 bits of its MD5); tickers sharing a key
-- share the record, a list ordered by ticker, and the reader picks its own. Only tickers with transcripts (a ticker
-- without one is a 404 whatever its call dates). Columns: k, v (JSON text). Served by getCompanyTranscripts and
-- getCompanyFacts without DuckDB; test/transcripts/transcripts-packed.test.ts compares both paths.
WITH t AS (
  SELECT ticker,
    list(struct_pack(transcript_key := transcript_key, title := title, fiscal_quarter := fiscal_quarter, fiscal_year := fiscal_year,
      call_date := call_date, format := format, speakers := speakers, qa_present := qa_present, qa_questions := qa_questions,
      key_metrics := key_metrics, word_count := word_count, topics := topics, notes := notes, source_origin := source_origin,
      fetch_origin := fetch_origin, origin := origin, markdown_origin := markdown_origin)
      ORDER BY call_date DESC NULLS LAST, fiscal_year DESC, fiscal_quarter DESC, transcript_key) AS transcripts
  FROM transcripts GROUP BY ticker
),
d AS (
  SELECT ticker, list(struct_pack(fiscal_year := fiscal_year, fiscal_quarter := fiscal_quarter, call_date := call_date, call_time := call_time)
      ORDER BY call_date DESC, fiscal_year DESC, fiscal_quarter DESC, call_time) AS call_dates
  FROM transcript_call_dates WHERE ticker IN (SELECT ticker FROM t) GROUP BY ticker
)
SELECT ('0x' || left(md5(t.ticker), 7))::INTEGER AS k,
  to_json(list(struct_pack(ticker := t.ticker, transcripts := t.transcripts, call_dates := coalesce(d.call_dates, [])) ORDER BY t.ticker))::VARCHAR AS v
FROM t LEFT JOIN d ON d.ticker = t.ticker
GROUP BY k
