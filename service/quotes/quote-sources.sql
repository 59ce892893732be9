-- Source files of quote bars (for rebuilding leaves). Params: $content_sha256 VARCHAR, $dataset VARCHAR.
-- Columns: dataset, content_sha256, source_url, retrieved_at, leaf_hash (the source leaf).
-- One row's fields together: the first retrieval of the content (then by URL and leaf), the same in every run and
-- the same row the chain fold uses (jobs/quotes/quotes.pipeline.ts foldQuoteChains).
SELECT dataset, content_sha256, arg_min(source_url, k) AS source_url, arg_min(retrieved_at, k) AS retrieved_at, arg_min(leaf_hash, k) AS leaf_hash
FROM sources, LATERAL (SELECT (retrieved_at, source_url, leaf_hash) AS k) WHERE content_sha256 = $content_sha256 AND dataset = $dataset
GROUP BY dataset, content_sha256
