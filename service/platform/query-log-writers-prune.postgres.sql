-- Removes the rows of query-log writers untouched for 30 days (processes long gone: nothing of theirs can be retried),
-- run when a writer opens (service/platform/query-log.postgres.ts; migration 0006). Params: none. Result: none.
DELETE FROM query_log_writers WHERE updated_at < now() - interval '30 days'
