-- Records, in the transaction that appended them, the number of the last query-log batch a writer committed
-- (service/platform/query-log.postgres.ts; migration 0006). Params: $1 writer_id, $2 the batch number.
-- Result: none.
UPDATE query_log_writers SET last_batch = GREATEST(last_batch, $2::bigint), updated_at = now() WHERE writer_id = $1
