-- Reads (creating it at 0) and locks this query-log writer's row before a batch is appended
-- (service/platform/query-log.postgres.ts; migration 0006). Params: $1 writer_id. Result: last_batch, the number of
-- the last batch this writer committed (0 for none): batches numbered at most this were written already.
INSERT INTO query_log_writers (writer_id, last_batch) VALUES ($1, 0)
ON CONFLICT (writer_id) DO UPDATE SET updated_at = now()
RETURNING last_batch
