-- Lookup keys of the transcripts serving database.
CREATE INDEX IF NOT EXISTS transcripts_ticker_idx ON transcripts (ticker);
CREATE INDEX IF NOT EXISTS transcript_facts_ticker_idx ON transcript_facts (ticker);
CREATE INDEX IF NOT EXISTS transcript_topics_topic_idx ON transcript_topics (topic);
