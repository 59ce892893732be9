-- Warm-up keys of the transcripts domain (service/warmup): a ticker with a transcript and a topic.
-- Params: none.
-- Columns: ticker, topic; NULL when absent.
SELECT (SELECT min(ticker) FROM transcripts) AS ticker, (SELECT min(topic) FROM transcript_topics) AS topic
