-- Source files of quote bars (for rebuilding leaves). Params: $content_sha256 VARCHAR, $dataset VARCHAR.
-- Columns: dataset, content_sha256, source_url, retrieved_at, leaf_hash (the source leaf).
SELECT dataset, content_sha256, any_value(source_url) AS source_url, any_value(retrieved_at) AS retrieved_at, any_value(leaf_hash) AS leaf_hash
FROM sources WHERE content_sha256 = $content_sha256 AND dataset = $dataset
GROUP BY dataset, content_sha256
