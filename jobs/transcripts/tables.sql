-- Transcripts domain tables. Nested values are JSON text. See README "Quotes and transcripts".

-- One row per earnings call: the JSON extraction (also whole in `extraction`), the markdown rendering and the
-- origin chain  IR fetch (optional) → source file (PDF/JSON/markdown) → extraction (JSON) and markdown leaves.
CREATE TABLE IF NOT EXISTS transcripts (
  transcript_key    VARCHAR NOT NULL,   -- TICKER-FYyyyy-Qn-format
  ticker            VARCHAR NOT NULL,
  title             VARCHAR NOT NULL,
  fiscal_year       INTEGER,
  fiscal_quarter    INTEGER,
  call_date         DATE,
  format            VARCHAR NOT NULL,
  speakers          JSON NOT NULL,
  qa_present        BOOLEAN NOT NULL,
  qa_questions      INTEGER NOT NULL,
  key_metrics       JSON NOT NULL,
  word_count        INTEGER NOT NULL,
  topics            JSON NOT NULL,
  notes             JSON NOT NULL,
  extraction        JSON NOT NULL,
  markdown          VARCHAR NOT NULL,
  source_files      JSON NOT NULL,     -- [{path, content_sha256}] every file the extraction rests on
  fetch_record      JSON,              -- the IR fetch record (url, time, TLS certificate, addresses) when fetched
  fetch_origin      JSON,
  source_origin     JSON NOT NULL,
  origin            JSON NOT NULL,     -- the extraction (JSON) leaf; parent = source_origin
  markdown_origin   JSON NOT NULL,     -- the markdown leaf; parent = source_origin
  origin_leaf_hash  VARCHAR NOT NULL
);

-- Facts by documented patterns (ingest/transcripts/facts.ts): record leaves whose parent is the extraction leaf.
CREATE TABLE IF NOT EXISTS transcript_facts (
  transcript_key  VARCHAR NOT NULL,
  ticker          VARCHAR NOT NULL,
  call_date       DATE,
  fiscal_year     INTEGER,
  fiscal_quarter  INTEGER,
  type            VARCHAR NOT NULL,   -- metric | guidance | strategy
  topic           VARCHAR NOT NULL,   -- ai | blockchain | quantum | cloud | ...
  speaker         VARCHAR,
  section         VARCHAR NOT NULL,   -- prepared | qa
  snippet         VARCHAR NOT NULL,
  pattern         VARCHAR NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL,
  origin          JSON NOT NULL
);

-- Topic mentions per call (sentences matching the topic pattern), for transcript search.
CREATE TABLE IF NOT EXISTS transcript_topics (
  transcript_key  VARCHAR NOT NULL,
  ticker          VARCHAR NOT NULL,
  title           VARCHAR NOT NULL,
  call_date       DATE,
  fiscal_year     INTEGER,
  fiscal_quarter  INTEGER,
  topic           VARCHAR NOT NULL,
  mentions        INTEGER NOT NULL
);

-- Earnings-call dates from company events files (history for predicting the next call).
CREATE TABLE IF NOT EXISTS transcript_call_dates (
  ticker          VARCHAR NOT NULL,
  company         VARCHAR,
  fiscal_year     INTEGER NOT NULL,
  fiscal_quarter  INTEGER NOT NULL,
  call_date       DATE NOT NULL,
  call_time       VARCHAR NOT NULL,
  origin_leaf_hash VARCHAR NOT NULL
);
