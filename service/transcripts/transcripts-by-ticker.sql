-- Transcripts of one ticker, newest call first. Params: $ticker VARCHAR.
-- Columns: transcript_key, title, fiscal_quarter, fiscal_year, call_date, format, speakers, qa_present, qa_questions,
--          key_metrics, word_count, topics, notes, source_origin, fetch_origin, origin, markdown_origin.
SELECT transcript_key, title, fiscal_quarter, fiscal_year, call_date, format, speakers, qa_present, qa_questions,
       key_metrics, word_count, topics, notes, source_origin, fetch_origin, origin, markdown_origin
FROM transcripts WHERE ticker = $ticker
ORDER BY call_date DESC NULLS LAST, fiscal_year DESC, fiscal_quarter DESC, transcript_key
