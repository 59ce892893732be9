-- Tables every warehouse domain carries, beside its own DDL.
--   sources:       one row per input file or HTTP response ingested (path or URL, size, SHA-256, when, which run).
--   rejects:       rows or files that failed validation, with file, line and reason (never silently dropped).
--   origin_leaves: every origin leaf ever issued in this domain (cumulative across snapshots), by leaf_hash.
CREATE TABLE IF NOT EXISTS sources (
  run_id          VARCHAR NOT NULL,
  dataset         VARCHAR NOT NULL,
  path            VARCHAR,
  source_url      VARCHAR,
  byte_size       BIGINT NOT NULL,
  content_sha256  VARCHAR NOT NULL,
  retrieved_at    VARCHAR,
  ingested_at     VARCHAR NOT NULL,
  leaf_hash       VARCHAR NOT NULL,
  row_count       BIGINT,
  reject_count    BIGINT
);
CREATE TABLE IF NOT EXISTS rejects (
  run_id   VARCHAR NOT NULL,
  dataset  VARCHAR NOT NULL,
  file     VARCHAR NOT NULL,
  line     BIGINT,
  reason   VARCHAR NOT NULL,
  raw      VARCHAR
);
CREATE TABLE IF NOT EXISTS origin_leaves (
  leaf_hash       VARCHAR NOT NULL,
  kind            VARCHAR NOT NULL,
  source          VARCHAR NOT NULL,
  source_url      VARCHAR,
  retrieved_at    VARCHAR,
  content_sha256  VARCHAR,
  record_sha256   VARCHAR,
  parent          VARCHAR,
  table_name      VARCHAR,
  first_run_id    VARCHAR NOT NULL
);
