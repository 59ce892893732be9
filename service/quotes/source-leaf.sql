-- Any leaf recorded in origin_leaves (source leaves of quote files). Params: $leaf_hash VARCHAR.
SELECT leaf_hash, kind, source, source_url, retrieved_at, content_sha256, record_sha256, parent
FROM origin_leaves WHERE leaf_hash = $leaf_hash LIMIT 1
