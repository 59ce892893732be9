-- Migration 0006: exactly-once query-log batches (service/platform/query-log.postgres.ts). Each query-log writer (one
-- per API process start) numbers its batches 1, 2, 3…; the transaction that appends a batch's rows also records its
-- number here, under this row's lock. A batch whose COMMIT was sent but never acknowledged (the connection dropped
-- while PostgreSQL went down) is sent again when the database is back: its rows are skipped when `last_batch` says it
-- was already committed, so a row is never counted twice. One row per process start; rows untouched for 30 days are
-- pruned when a writer opens.
CREATE TABLE IF NOT EXISTS query_log_writers (
  writer_id   VARCHAR PRIMARY KEY,
  last_batch  BIGINT NOT NULL,
  updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
