-- Appends a batch of query-log rows (PostgreSQL, service/platform/query-log.postgres.ts). Params: $1 the rows as
-- NDJSON text, one {"ts_ms":…,"client":…,…} object a line (query-log.ts toLine), the last line ending in a newline.
-- Result: none (the row count is the command's).
INSERT INTO query_log (ts_ms, client, tier, agent_type, method, path, ticker, status, duration_ms)
SELECT r.ts_ms, r.client, r.tier, r.agent_type, r.method, r.path, r.ticker, r.status, r.duration_ms
FROM unnest(string_to_array(rtrim($1::text, E'\n'), E'\n')) AS line,
  LATERAL json_populate_record(NULL::query_log, line::json) AS r
